package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.GatewayCluster;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.EncodingType;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * ListObjectsV2 and ListObjects on a small bucket of awkward keys, every parameter: prefix, delimiter,
 * start-after, marker, continuation token, max-keys, encoding-type=url; checked against
 * {@link ListingModel}.
 */
class ListingTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static final List<String> KEYS = List.of("a", "a/b", "a/b/c", "a/c", "a//x", "a/b/d/e", "b c", "b+c", "b%c",
            "b/", "d/e/f", "d/g", "é", "é/1", "z", "zz/top", "🐄/1", "🐄/2");
    private static String bucket;
    private static ListingModel model;

    @BeforeAll
    static void keys() throws Exception {
        bucket = S3.bucket("listing");
        RawS3 raw = new RawS3(S3.endpoint());
        for (String k : KEYS) {
            if (k.contains("//")) {
                // The SDK's Apache client sends "//" as "/%2F" (signed as "//"): that path is
                // ObjectOperationsTest's concern; here the key goes up as a plain signed PUT.
                RawS3.Answer a = raw.signed("PUT", "/" + bucket + "/" + k, Map.of(), Map.of(), k.getBytes(StandardCharsets.UTF_8),
                        GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY, Clock.systemUTC());
                assertThat(a.status()).as("PUT %s: %s", k, a).isEqualTo(200);
            } else {
                S3.s3().putObject(b -> b.bucket(bucket).key(k), RequestBody.fromString(k));
            }
        }
        model = new ListingModel(KEYS);
    }

    @Test
    void v2WithPrefixDelimiterStartAfterAndMaxKeys() {
        for (int max : List.of(1, 2, 3, 1000)) {
            for (boolean url : List.of(false, true)) {
                model.checkV2(S3.s3(), bucket, null, null, null, max, url);
                model.checkV2(S3.s3(), bucket, null, "/", null, max, url);
                model.checkV2(S3.s3(), bucket, "a/", "/", null, max, url);
                model.checkV2(S3.s3(), bucket, "a", "/", null, max, url);
                model.checkV2(S3.s3(), bucket, "a/", null, "a/b/c", max, url);
                model.checkV2(S3.s3(), bucket, null, "/", "b", max, url);
                model.checkV2(S3.s3(), bucket, "b", "%", null, max, url);
                model.checkV2(S3.s3(), bucket, "🐄", "/", null, max, url);
                model.checkV2(S3.s3(), bucket, "nothing-here", "/", null, max, url);
            }
        }
    }

    @Test
    void v1WithPrefixDelimiterMarkerAndMaxKeys() {
        for (int max : List.of(1, 2, 1000)) {
            for (boolean url : List.of(false, true)) {
                model.checkV1(S3.s3(), bucket, null, null, max, url);
                model.checkV1(S3.s3(), bucket, null, "/", max, url);
                model.checkV1(S3.s3(), bucket, "a/", "/", max, url);
                model.checkV1(S3.s3(), bucket, "é", "/", max, url);
            }
        }
        assertThat(S3.s3().listObjects(b -> b.bucket(bucket).marker("d/g")).contents().stream().map(S3Object::key))
                .containsExactlyElementsOf(model.expected(null, null, "d/g"));
    }

    @Test
    void continuationTokensAfterEveryKindOfKey() {
        // U+FFFD is a character like any other in a key; so are those beyond the BMP.
        String other = S3.bucket("tokens");
        List<String> keys = List.of("a", "\uFFFD", "\uFFFD/x", "\uFFFDz", "z", "🐄", "🐄/1");
        for (String k : keys) {
            S3.s3().putObject(b -> b.bucket(other).key(k), RequestBody.fromString(k));
        }
        ListingModel m = new ListingModel(keys);
        for (boolean url : List.of(false, true)) {
            m.checkV2(S3.s3(), other, null, null, null, 1, url);
            m.checkV2(S3.s3(), other, null, "/", null, 1, url);
            m.checkV1(S3.s3(), other, null, "/", 1, url);
        }
    }

    @Test
    void v2AnswersWhatItWasAsked() {
        ListObjectsV2Response r = S3.s3().listObjectsV2(b -> b.bucket(bucket).prefix("a/").delimiter("/").encodingType(EncodingType.URL));
        assertThat(r.name()).isEqualTo(bucket);
        assertThat(r.prefix()).isEqualTo("a/");
        assertThat(r.delimiter()).isEqualTo("/");
        assertThat(r.contents()).extracting(S3Object::key).containsExactly("a/b", "a/c");
        assertThat(r.commonPrefixes()).extracting(CommonPrefix::prefix).containsExactly("a//", "a/b/");
        S3Object b = r.contents().get(0);
        assertThat(b.size()).isEqualTo(3);
        assertThat(b.eTag()).isEqualTo(Digests.etag("a/b".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertThat(b.lastModified()).isNotNull();
        assertThat(b.storageClassAsString()).isEqualTo("STANDARD");
        // max-keys 0: nothing, not truncated? S3 answers an empty page; only its emptiness is sure.
        assertThat(S3.s3().listObjectsV2(x -> x.bucket(bucket).maxKeys(0)).contents()).isEmpty();
    }
}
