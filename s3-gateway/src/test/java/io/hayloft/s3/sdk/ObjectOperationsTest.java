package io.hayloft.s3.sdk;

import static io.hayloft.s3.sdk.S3Errors.expect;
import static io.hayloft.s3.sdk.S3Errors.expectStatus;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.DeletedObject;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.MetadataDirective;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * PutObject, GetObject (conditions, response overrides), HeadObject, DeleteObject, DeleteObjects,
 * CopyObject (COPY and REPLACE), odd keys and sizes 0 and 1, through the Java SDK v2 with its default
 * integrity protections (every PUT is aws-chunked with a CRC32 trailer).
 */
class ObjectOperationsTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3.bucket("objects");
    }

    private static S3Client s3() {
        return S3.s3();
    }

    @Test
    void anObjectIsPutReadHeadedAndDeleted() {
        byte[] data = Digests.bytes(1, 3 * SdkCluster.CHUNK + 12345);
        PutObjectResponse put = s3().putObject(b -> b.bucket(bucket).key("photo.jpg").contentType("image/jpeg")
                .metadata(Map.of("camera", "x100", "place", "barn")).cacheControl("max-age=60")
                .contentDisposition("inline").contentLanguage("en"), RequestBody.fromBytes(data));
        assertThat(put.eTag()).isEqualTo(Digests.etag(data));
        assertThat(put.checksumCRC32()).as("the SDK's default CRC32, stored and answered").isEqualTo(Digests.crc32(data));

        ResponseBytes<GetObjectResponse> got = s3().getObjectAsBytes(b -> b.bucket(bucket).key("photo.jpg"));
        assertThat(got.asByteArray()).isEqualTo(data);
        GetObjectResponse r = got.response();
        assertThat(r.eTag()).isEqualTo(Digests.etag(data));
        assertThat(r.contentLength()).isEqualTo(data.length);
        assertThat(r.contentType()).isEqualTo("image/jpeg");
        assertThat(r.metadata()).containsExactlyInAnyOrderEntriesOf(Map.of("camera", "x100", "place", "barn"));
        assertThat(r.cacheControl()).isEqualTo("max-age=60");
        assertThat(r.contentDisposition()).isEqualTo("inline");
        assertThat(r.contentLanguage()).isEqualTo("en");
        assertThat(r.lastModified()).isBetween(Instant.now().minus(5, ChronoUnit.MINUTES), Instant.now().plusSeconds(5));

        HeadObjectResponse head = s3().headObject(b -> b.bucket(bucket).key("photo.jpg"));
        assertThat(head.contentLength()).isEqualTo(data.length);
        assertThat(head.eTag()).isEqualTo(Digests.etag(data));
        assertThat(head.contentType()).isEqualTo("image/jpeg");
        assertThat(head.metadata()).containsEntry("camera", "x100");
        assertThat(head.lastModified()).isEqualTo(r.lastModified());

        s3().deleteObject(b -> b.bucket(bucket).key("photo.jpg"));
        expect(() -> s3().getObject(b -> b.bucket(bucket).key("photo.jpg")), "NoSuchKey", 404);
        assertThat(expectStatus(() -> s3().headObject(b -> b.bucket(bucket).key("photo.jpg")), 404))
                .isInstanceOf(NoSuchKeyException.class);
        // Deleting what is not there succeeds (S3 is idempotent here).
        s3().deleteObject(b -> b.bucket(bucket).key("photo.jpg"));
    }

    @Test
    void objectsOfZeroAndOneByteAndAnOverwrite() {
        s3().putObject(b -> b.bucket(bucket).key("empty"), RequestBody.empty());
        ResponseBytes<GetObjectResponse> empty = s3().getObjectAsBytes(b -> b.bucket(bucket).key("empty"));
        assertThat(empty.asByteArray()).isEmpty();
        assertThat(empty.response().contentLength()).isZero();
        assertThat(empty.response().eTag()).isEqualTo("\"d41d8cd98f00b204e9800998ecf8427e\"");
        assertThat(s3().headObject(b -> b.bucket(bucket).key("empty")).contentLength()).isZero();

        s3().putObject(b -> b.bucket(bucket).key("one"), RequestBody.fromBytes(new byte[] {(byte) 0xff}));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("one")).asByteArray()).containsExactly(0xff);

        // An overwrite: the new bytes and ETag, whatever the sizes.
        byte[] bigger = Digests.bytes(2, SdkCluster.CHUNK + 1);
        s3().putObject(b -> b.bucket(bucket).key("one"), RequestBody.fromBytes(bigger));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("one")).asByteArray()).isEqualTo(bigger);
        s3().putObject(b -> b.bucket(bucket).key("one"), RequestBody.empty());
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("one")).asByteArray()).isEmpty();
    }

    @Test
    void keysWithUnicodeSpacesPlusAndPercentRoundTrip() {
        roundTrip(List.of("grüße/ファイル 名.txt", "with space", "a+b=c", "100% sure", "%2F not a slash",
                "trailing/", "tab\there", "emoji 🐄.png", "q?x=1&y#frag", "~tilde*star'quote(paren)", "k".repeat(1024)));
    }

    @Test
    void keysWithRunsOfSlashesRoundTrip() {
        // The SDK signs the path with its "//" and its Apache client sends each "//" as "/%2F" (so that no
        // URI normalisation on the way collapses them); S3 takes both.
        roundTrip(List.of("a//b///c", "/leading", "//"));
    }

    private static void roundTrip(List<String> keys) {
        // Every key tried, the failures reported together.
        Map<String, String> failed = new java.util.TreeMap<>();
        for (String key : keys) {
            byte[] data = key.getBytes(StandardCharsets.UTF_8);
            try {
                s3().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(data));
                assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray()).as("key %s", key).isEqualTo(data);
                assertThat(s3().headObject(b -> b.bucket(bucket).key(key)).contentLength()).isEqualTo(data.length);
            } catch (RuntimeException | AssertionError e) {
                failed.put(key, e.getMessage());
            }
        }
        assertThat(failed).as("keys that did not round-trip").isEmpty();
        List<String> listed = new ArrayList<>();
        s3().listObjectsV2Paginator(b -> b.bucket(bucket)).contents().forEach(o -> listed.add(o.key()));
        assertThat(listed).containsAll(keys);
        for (String key : keys) {
            s3().deleteObject(b -> b.bucket(bucket).key(key));
            expect(() -> s3().getObject(b -> b.bucket(bucket).key(key)), "NoSuchKey", 404);
        }
    }

    @Test
    void aKeyOfMoreThan1024BytesIsRefused() {
        // 1024 bytes of UTF-8 is the limit, counted in bytes: 342 three-byte characters are 1026.
        expect(() -> s3().putObject(b -> b.bucket(bucket).key("k".repeat(1025)), RequestBody.fromString("x")),
                "KeyTooLongError", 400);
        expect(() -> s3().putObject(b -> b.bucket(bucket).key("€".repeat(342)), RequestBody.fromString("x")),
                "KeyTooLongError", 400);
    }

    @Test
    void conditionalGets() {
        byte[] data = Digests.bytes(3, 1000);
        String etag = s3().putObject(b -> b.bucket(bucket).key("cond"), RequestBody.fromBytes(data)).eTag();
        Instant modified = s3().headObject(b -> b.bucket(bucket).key("cond")).lastModified();
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("cond").ifMatch(etag)).asByteArray()).isEqualTo(data);
        expect(() -> s3().getObject(b -> b.bucket(bucket).key("cond").ifMatch("\"0123456789abcdef0123456789abcdef\"")),
                "PreconditionFailed", 412);
        expectStatus(() -> s3().getObject(b -> b.bucket(bucket).key("cond").ifNoneMatch(etag)), 304);
        expectStatus(() -> s3().headObject(b -> b.bucket(bucket).key("cond").ifNoneMatch(etag)), 304);
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("cond").ifNoneMatch("\"other\"")).asByteArray())
                .isEqualTo(data);
        expectStatus(() -> s3().getObject(b -> b.bucket(bucket).key("cond").ifModifiedSince(modified.plusSeconds(3600))), 304);
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("cond").ifModifiedSince(modified.minusSeconds(3600)))
                .asByteArray()).isEqualTo(data);
        expect(() -> s3().getObject(b -> b.bucket(bucket).key("cond").ifUnmodifiedSince(modified.minusSeconds(3600))),
                "PreconditionFailed", 412);
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("cond").ifUnmodifiedSince(modified.plusSeconds(3600)))
                .asByteArray()).isEqualTo(data);
        expectStatus(() -> s3().headObject(b -> b.bucket(bucket).key("cond").ifMatch("\"nope\"")), 412);
    }

    @Test
    void responseOverridesChangeTheHeadersOfOneGet() {
        s3().putObject(b -> b.bucket(bucket).key("over").contentType("text/plain"), RequestBody.fromString("hello"));
        Instant expires = Instant.parse("2030-01-02T03:04:05Z");
        GetObjectResponse r = s3().getObjectAsBytes(b -> b.bucket(bucket).key("over")
                .responseContentType("application/x-override")
                .responseContentDisposition("attachment; filename=\"h.txt\"")
                .responseCacheControl("no-cache")
                .responseContentLanguage("fr")
                .responseContentEncoding("identity")
                .responseExpires(expires)).response();
        assertThat(r.contentType()).isEqualTo("application/x-override");
        assertThat(r.contentDisposition()).isEqualTo("attachment; filename=\"h.txt\"");
        assertThat(r.cacheControl()).isEqualTo("no-cache");
        assertThat(r.contentLanguage()).isEqualTo("fr");
        assertThat(r.contentEncoding()).isEqualTo("identity");
        assertThat(r.expires()).isEqualTo(expires);
        assertThat(s3().headObject(b -> b.bucket(bucket).key("over")).contentType()).as("stored, unchanged").isEqualTo("text/plain");
    }

    @Test
    void deleteObjectsDeletesManyAndReportsEach() {
        List<ObjectIdentifier> ids = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            String key = "many/" + i;
            s3().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromString(key));
            ids.add(ObjectIdentifier.builder().key(key).build());
        }
        ids.add(ObjectIdentifier.builder().key("many/never-was").build());
        // The SDK sends DeleteObjects with the checksum S3 requires (CRC32 by default now, Content-MD5 before).
        DeleteObjectsResponse r = s3().deleteObjects(b -> b.bucket(bucket).delete(Delete.builder().objects(ids).build()));
        assertThat(r.errors()).isEmpty();
        assertThat(r.deleted().stream().map(DeletedObject::key)).as("S3 reports a key that was not there as deleted")
                .containsExactlyInAnyOrderElementsOf(ids.stream().map(ObjectIdentifier::key).toList());
        assertThat(s3().listObjectsV2(b -> b.bucket(bucket).prefix("many/")).contents()).isEmpty();

        s3().putObject(b -> b.bucket(bucket).key("quiet/1"), RequestBody.fromString("1"));
        s3().putObject(b -> b.bucket(bucket).key("quiet/2"), RequestBody.fromString("2"));
        DeleteObjectsResponse quiet = s3().deleteObjects(b -> b.bucket(bucket).delete(Delete.builder().quiet(true)
                .objects(ObjectIdentifier.builder().key("quiet/1").build(), ObjectIdentifier.builder().key("quiet/2").build())
                .build()));
        assertThat(quiet.deleted()).as("quiet mode reports only errors").isEmpty();
        assertThat(quiet.errors()).isEmpty();
        assertThat(s3().listObjectsV2(b -> b.bucket(bucket).prefix("quiet/")).keyCount()).isZero();
    }

    @Test
    void copyObjectCopiesOrReplacesTheMetadata() {
        byte[] data = Digests.bytes(4, 2 * SdkCluster.CHUNK + 7);
        s3().putObject(b -> b.bucket(bucket).key("src").contentType("image/png").metadata(Map.of("origin", "barn")),
                RequestBody.fromBytes(data));
        String other = S3.bucket("copy-target");

        CopyObjectResponse copy = s3().copyObject(b -> b.sourceBucket(bucket).sourceKey("src")
                .destinationBucket(other).destinationKey("dst/copy"));
        assertThat(copy.copyObjectResult().eTag()).isEqualTo(Digests.etag(data));
        ResponseBytes<GetObjectResponse> c = s3().getObjectAsBytes(b -> b.bucket(other).key("dst/copy"));
        assertThat(c.asByteArray()).isEqualTo(data);
        assertThat(c.response().contentType()).isEqualTo("image/png");
        assertThat(c.response().metadata()).containsExactlyEntriesOf(Map.of("origin", "barn"));

        s3().copyObject(b -> b.sourceBucket(bucket).sourceKey("src").destinationBucket(other).destinationKey("dst/replaced")
                .metadataDirective(MetadataDirective.REPLACE).contentType("text/x-new").metadata(Map.of("fresh", "yes")));
        HeadObjectResponse replaced = s3().headObject(b -> b.bucket(other).key("dst/replaced"));
        assertThat(replaced.contentType()).isEqualTo("text/x-new");
        assertThat(replaced.metadata()).containsExactlyEntriesOf(Map.of("fresh", "yes"));
        assertThat(replaced.eTag()).isEqualTo(Digests.etag(data));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(other).key("dst/replaced")).asByteArray()).isEqualTo(data);

        // Onto itself with REPLACE: how clients change an object's metadata in place.
        s3().copyObject(b -> b.sourceBucket(bucket).sourceKey("src").destinationBucket(bucket).destinationKey("src")
                .metadataDirective(MetadataDirective.REPLACE).contentType("image/webp"));
        assertThat(s3().headObject(b -> b.bucket(bucket).key("src")).contentType()).isEqualTo("image/webp");
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("src")).asByteArray()).isEqualTo(data);

        // The source stays after its copies are deleted, and the other way round.
        s3().deleteObject(b -> b.bucket(other).key("dst/copy"));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("src")).asByteArray()).isEqualTo(data);
        s3().deleteObject(b -> b.bucket(bucket).key("src"));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(other).key("dst/replaced")).asByteArray()).isEqualTo(data);

        expect(() -> s3().copyObject(b -> b.sourceBucket(bucket).sourceKey("src").destinationBucket(other)
                .destinationKey("x")), "NoSuchKey", 404);
        expect(() -> s3().copyObject(b -> b.sourceBucket(other).sourceKey("dst/replaced").destinationBucket(other)
                .destinationKey("y").copySourceIfMatch("\"0123456789abcdef0123456789abcdef\"")), "PreconditionFailed", 412);
        assertThat(s3().listObjectsV2(b -> b.bucket(other)).contents().stream().map(S3Object::key)).containsExactly("dst/replaced");
    }
}
