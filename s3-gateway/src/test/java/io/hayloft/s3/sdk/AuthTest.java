package io.hayloft.s3.sdk;

import static io.hayloft.s3.sdk.S3Errors.expect;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.GatewayCluster;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;
import software.amazon.awssdk.services.s3.presigner.model.PresignedPutObjectRequest;

/**
 * Signature Version 4 from the outside: presigned GET and PUT made by the SDK's S3Presigner work; an
 * expired, a tampered and a wrongly keyed one are refused 403; the SDK signing with a wrong secret or
 * an unknown access key is refused; a request with no signature is refused with AccessDenied in S3's
 * XML; a clock 20 minutes off is RequestTimeTooSkewed. Every refusal is S3 XML with a request id.
 */
class AuthTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static String bucket;
    private static RawS3 raw;
    private static final byte[] DATA = "presigned bytes".getBytes(StandardCharsets.UTF_8);

    @BeforeAll
    static void setUp() {
        bucket = S3.bucket("auth");
        raw = new RawS3(S3.endpoint());
        S3.s3().putObject(b -> b.bucket(bucket).key("secret photo.jpg"), RequestBody.fromBytes(DATA));
    }

    private static void refused(RawS3.Answer a, String code) {
        assertThat(a.status()).as("%s", a).isEqualTo(403);
        assertThat(a.code()).as("%s", a).isEqualTo(code);
        assertThat(a.requestId()).as("%s", a).isNotBlank();
        assertThat(a.header("Content-Type")).as("%s", a).contains("xml");
    }

    @Test
    void presignedGetAndPutWork() throws Exception {
        PresignedGetObjectRequest get = S3.presigner().presignGetObject(p -> p.signatureDuration(Duration.ofMinutes(5))
                .getObjectRequest(g -> g.bucket(bucket).key("secret photo.jpg")));
        RawS3.Answer got = raw.send(get.url().toURI(), "GET", flat(get.signedHeaders()), null);
        assertThat(got.status()).as("%s", got).isEqualTo(200);
        assertThat(got.body()).isEqualTo("presigned bytes");

        byte[] up = "put through a presigned URL".getBytes(StandardCharsets.UTF_8);
        PresignedPutObjectRequest put = S3.presigner().presignPutObject(p -> p.signatureDuration(Duration.ofMinutes(5))
                .putObjectRequest(o -> o.bucket(bucket).key("uploaded/by url").contentType("text/plain")));
        Map<String, String> headers = flat(put.signedHeaders());
        assertThat(headers).containsEntry("content-type", "text/plain");
        RawS3.Answer putAnswer = raw.send(put.url().toURI(), "PUT", headers, up);
        assertThat(putAnswer.status()).as("%s", putAnswer).isEqualTo(200);
        assertThat(putAnswer.header("ETag")).isEqualTo(Digests.etag(up));
        assertThat(S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key("uploaded/by url")).asByteArray()).isEqualTo(up);
    }

    @Test
    void anExpiredPresignedUrlIsRefused() throws Exception {
        String path = "/" + bucket + "/secret%20photo.jpg";
        URI fresh = raw.presign("GET", path, GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY, Clock.systemUTC(),
                Duration.ofSeconds(60));
        assertThat(raw.send(fresh, "GET", Map.of(), null).status()).as("the same URL signed now works").isEqualTo(200);
        // Signed an hour ago for 60 s.
        Clock past = Clock.fixed(Instant.now().minus(Duration.ofHours(1)), ZoneOffset.UTC);
        URI expired = raw.presign("GET", path, GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY, past, Duration.ofSeconds(60));
        refused(raw.send(expired, "GET", Map.of(), null), "AccessDenied");
        URI expiredPut = raw.presign("PUT", "/" + bucket + "/expired-put", GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY,
                past, Duration.ofSeconds(60));
        refused(raw.send(expiredPut, "PUT", Map.of(), "x".getBytes(StandardCharsets.UTF_8)), "AccessDenied");
        S3Errors.expectStatus(() -> S3.s3().headObject(b -> b.bucket(bucket).key("expired-put")), 404);
    }

    @Test
    void aTamperedPresignedUrlIsRefused() throws Exception {
        PresignedGetObjectRequest get = S3.presigner().presignGetObject(p -> p.signatureDuration(Duration.ofMinutes(5))
                .getObjectRequest(g -> g.bucket(bucket).key("secret photo.jpg")));
        String url = get.url().toString();
        // One character of the signature, of the expiry, of the key.
        int sig = url.indexOf("X-Amz-Signature=") + "X-Amz-Signature=".length();
        String badSignature = url.substring(0, sig) + (url.charAt(sig) == '0' ? '1' : '0') + url.substring(sig + 1);
        String badExpiry = url.replace("X-Amz-Expires=300", "X-Amz-Expires=301");
        assertThat(badExpiry).isNotEqualTo(url);
        String badKey = url.replace("secret%20photo.jpg", "secret%20photo.jpeg");
        for (String u : List.of(badSignature, badExpiry, badKey)) {
            refused(raw.send(URI.create(u), "GET", flat(get.signedHeaders()), null), "SignatureDoesNotMatch");
        }
        // A URL signed with another secret.
        URI wrongKey = raw.presign("GET", "/" + bucket + "/secret%20photo.jpg", GatewayCluster.ACCESS_KEY, "not-the-secret",
                Clock.systemUTC(), Duration.ofSeconds(60));
        refused(raw.send(wrongKey, "GET", Map.of(), null), "SignatureDoesNotMatch");
    }

    @Test
    void aWrongSecretOrAnUnknownKeyIsRefused() {
        try (S3Client wrong = S3.client(GatewayCluster.ACCESS_KEY, "not-the-secret-key")) {
            expect(() -> wrong.getObject(b -> b.bucket(bucket).key("secret photo.jpg")), "SignatureDoesNotMatch", 403);
            expect(() -> wrong.putObject(b -> b.bucket(bucket).key("intruder"), RequestBody.fromString("x")),
                    "SignatureDoesNotMatch", 403);
            expect(() -> wrong.listBuckets(), "SignatureDoesNotMatch", 403);
        }
        try (S3Client unknown = S3.client("AKIDNOTAUSER", GatewayCluster.SECRET_KEY)) {
            expect(() -> unknown.getObject(b -> b.bucket(bucket).key("secret photo.jpg")), "InvalidAccessKeyId", 403);
        }
        expect(() -> S3.s3().getObject(b -> b.bucket(bucket).key("intruder")), "NoSuchKey", 404);
    }

    @Test
    void anonymousRequestsAreRefusedWithS3Xml() throws Exception {
        refused(raw.anonymous("GET", "/", null), "AccessDenied");
        refused(raw.anonymous("GET", "/" + bucket + "/secret%20photo.jpg", null), "AccessDenied");
        refused(raw.anonymous("GET", "/" + bucket + "?list-type=2", null), "AccessDenied");
        refused(raw.anonymous("PUT", "/" + bucket + "/anonymous", "x".getBytes(StandardCharsets.UTF_8)), "AccessDenied");
        refused(raw.anonymous("DELETE", "/" + bucket + "/secret%20photo.jpg", null), "AccessDenied");
        // a Signature Version 2 presigned URL (what the aws CLI v1 makes by default) is refused, and says why
        RawS3.Answer v2 = raw.anonymous("GET", "/" + bucket + "/secret%20photo.jpg?AWSAccessKeyId=" + GatewayCluster.ACCESS_KEY
                + "&Signature=s%2B6cNzE5XrncF7pIYhaDFfbYP1E%3D&Expires=4102444800", null);
        refused(v2, "AccessDenied");
        assertThat(v2.body()).contains("Signature Version 2 is not supported");
        assertThat(S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key("secret photo.jpg")).asByteArray()).isEqualTo(DATA);
    }

    @Test
    void aSkewedClockIsRefused() throws Exception {
        String path = "/" + bucket + "/secret%20photo.jpg";
        RawS3.Answer now = raw.signed("GET", path, Map.of(), Map.of(), null, GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY,
                Clock.systemUTC());
        assertThat(now.status()).as("the same request signed now works: %s", now).isEqualTo(200);
        for (Duration skew : List.of(Duration.ofMinutes(-20), Duration.ofMinutes(20))) {
            RawS3.Answer a = raw.signed("GET", path, Map.of(), Map.of(), null, GatewayCluster.ACCESS_KEY, GatewayCluster.SECRET_KEY,
                    Clock.offset(Clock.systemUTC(), skew));
            refused(a, "RequestTimeTooSkewed");
        }
    }

    private static Map<String, String> flat(Map<String, List<String>> headers) {
        Map<String, String> m = new HashMap<>();
        headers.forEach((k, v) -> m.put(k, String.join(",", v)));
        return m;
    }
}
