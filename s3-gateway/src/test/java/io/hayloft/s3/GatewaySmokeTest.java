package io.hayloft.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The gateway end to end on a real cluster (GatewayCluster: a directory, three stores) through the
 * AWS SDK for Java v2 with its default integrity protections (aws-chunked bodies, CRC32 trailers):
 * buckets, put/get/head/delete, a 20 MiB object over 1 MiB chunks read by ranges across chunk
 * boundaries, a multipart upload of three parts, a listing with a delimiter, S3 XML errors. The
 * conformance suite (cli, "sdk") covers every operation; this is the gateway's own smoke test.
 */
class GatewaySmokeTest {
    @TempDir
    static Path dir;
    static GatewayCluster cluster;
    static S3Client s3;

    @BeforeAll
    static void start() throws Exception {
        cluster = GatewayCluster.start(dir, Map.of("chunkBytes", "1048576"));
        s3 = S3Client.builder().endpointOverride(URI.create(cluster.endpoint())).region(Region.US_EAST_1).forcePathStyle(true)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(GatewayCluster.ACCESS_KEY,
                        GatewayCluster.SECRET_KEY))).build();
    }

    @AfterAll
    static void stop() {
        if (s3 != null) {
            s3.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void bucketsAndSmallObjects() {
        s3.createBucket(b -> b.bucket("smoke"));
        assertThat(s3.listBuckets().buckets()).extracting(b -> b.name()).contains("smoke");
        s3.headBucket(b -> b.bucket("smoke"));
        assertThatThrownBy(() -> s3.createBucket(b -> b.bucket("smoke"))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("BucketAlreadyOwnedByYou"));

        byte[] hello = "hello, hayloft".getBytes(StandardCharsets.UTF_8);
        String etag = s3.putObject(b -> b.bucket("smoke").key("dir/hello world+%.txt").contentType("text/plain")
                .metadata(Map.of("color", "blue")), RequestBody.fromBytes(hello)).eTag();
        ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("smoke").key("dir/hello world+%.txt"));
        assertThat(got.asByteArray()).isEqualTo(hello);
        assertThat(got.response().eTag()).isEqualTo(etag);
        assertThat(got.response().contentType()).isEqualTo("text/plain");
        assertThat(got.response().metadata()).containsEntry("color", "blue");
        HeadObjectResponse head = s3.headObject(b -> b.bucket("smoke").key("dir/hello world+%.txt").checksumMode(ChecksumMode.ENABLED));
        assertThat(head.contentLength()).isEqualTo(hello.length);
        assertThat(head.checksumCRC32()).isNotNull();

        s3.putObject(b -> b.bucket("smoke").key("empty"), RequestBody.empty());
        assertThat(s3.getObjectAsBytes(b -> b.bucket("smoke").key("empty")).asByteArray()).isEmpty();
        assertThat(s3.getObjectAsBytes(b -> b.bucket("smoke").key("dir/hello world+%.txt").range("bytes=-3"))
                .asUtf8String()).isEqualTo("oft");

        // a streamed body that fails its digest: S3's XML error (rendered through server-kit's error hook), nothing stored
        assertThatThrownBy(() -> s3.putObject(b -> b.bucket("smoke").key("bad").contentMD5("1B2M2Y8AsgTpgAmY7PhCfg=="),
                RequestBody.fromBytes(hello))).isInstanceOfSatisfying(S3Exception.class,
                        e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("BadDigest"));
        assertThatThrownBy(() -> s3.headObject(b -> b.bucket("smoke").key("bad"))).isInstanceOf(NoSuchKeyException.class);

        s3.deleteObject(b -> b.bucket("smoke").key("empty"));
        s3.deleteObject(b -> b.bucket("smoke").key("never-there"));
        assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("smoke").key("empty"))).isInstanceOf(NoSuchKeyException.class);
        assertThatThrownBy(() -> s3.deleteBucket(b -> b.bucket("smoke"))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("BucketNotEmpty"));
        s3.deleteObject(b -> b.bucket("smoke").key("dir/hello world+%.txt"));
        s3.deleteBucket(b -> b.bucket("smoke"));
        assertThatThrownBy(() -> s3.headBucket(b -> b.bucket("smoke"))).isInstanceOf(S3Exception.class);
    }

    @Test
    void aLargeObjectReadByRangesAcrossChunkBoundaries() {
        s3.createBucket(b -> b.bucket("large"));
        byte[] data = random(20 << 20, 20);
        s3.putObject(b -> b.bucket("large").key("twenty"), RequestBody.fromBytes(data));
        assertThat(s3.getObjectAsBytes(b -> b.bucket("large").key("twenty")).asByteArray()).isEqualTo(data);
        int mib = 1 << 20;
        long[][] ranges = {{0, 0}, {mib - 1, mib}, {mib - 1, 3L * mib + 1}, {5L * mib, 6L * mib - 1}, {data.length - 1, data.length - 1},
                {19L * mib - 17, 19L * mib + 17}};
        for (long[] r : ranges) {
            byte[] part = s3.getObjectAsBytes(b -> b.bucket("large").key("twenty").range("bytes=" + r[0] + "-" + r[1])).asByteArray();
            assertThat(part).as("bytes=%d-%d", r[0], r[1]).isEqualTo(Arrays.copyOfRange(data, (int) r[0], (int) r[1] + 1));
        }
        assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("large").key("twenty").range("bytes=" + data.length + "-")))
                .isInstanceOfSatisfying(S3Exception.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(416);
                    assertThat(e.awsErrorDetails().errorCode()).isEqualTo("InvalidRange");
                });
    }

    @Test
    void multipartUploadOfThreeParts() {
        s3.createBucket(b -> b.bucket("multi"));
        String id = s3.createMultipartUpload(b -> b.bucket("multi").key("m").checksumAlgorithm(ChecksumAlgorithm.CRC32)).uploadId();
        byte[][] parts = {random(5 << 20, 1), random(5 << 20, 2), random(1234, 3)};
        List<CompletedPart> done = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            int n = i + 1;
            var r = s3.uploadPart(b -> b.bucket("multi").key("m").uploadId(id).partNumber(n).checksumAlgorithm(ChecksumAlgorithm.CRC32),
                    RequestBody.fromBytes(parts[i]));
            done.add(CompletedPart.builder().partNumber(n).eTag(r.eTag()).checksumCRC32(r.checksumCRC32()).build());
        }
        assertThat(s3.listParts(b -> b.bucket("multi").key("m").uploadId(id)).parts()).hasSize(3);
        var complete = s3.completeMultipartUpload(b -> b.bucket("multi").key("m").uploadId(id)
                .multipartUpload(m -> m.parts(done)));
        assertThat(complete.eTag()).endsWith("-3\"");
        assertThat(complete.checksumCRC32()).endsWith("-3");
        byte[] whole = new byte[(10 << 20) + 1234];
        System.arraycopy(parts[0], 0, whole, 0, 5 << 20);
        System.arraycopy(parts[1], 0, whole, 5 << 20, 5 << 20);
        System.arraycopy(parts[2], 0, whole, 10 << 20, 1234);
        ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("multi").key("m"));
        assertThat(got.asByteArray()).isEqualTo(whole);
        assertThat(got.response().eTag()).isEqualTo(complete.eTag());
        byte[] second = s3.getObjectAsBytes(b -> b.bucket("multi").key("m").partNumber(2)).asByteArray();
        assertThat(second).isEqualTo(parts[1]);
        byte[] across = s3.getObjectAsBytes(b -> b.bucket("multi").key("m").range("bytes=" + ((5 << 20) - 10) + "-" + ((5 << 20) + 9)))
                .asByteArray();
        assertThat(across).isEqualTo(Arrays.copyOfRange(whole, (5 << 20) - 10, (5 << 20) + 10));
    }

    @Test
    void listingWithADelimiter() {
        s3.createBucket(b -> b.bucket("list"));
        for (String k : new String[] {"a/1", "a/2", "b/1", "c", "d/e/f"}) {
            s3.putObject(b -> b.bucket("list").key(k), RequestBody.fromString(k));
        }
        ListObjectsV2Response l = s3.listObjectsV2(b -> b.bucket("list").delimiter("/"));
        assertThat(l.contents()).extracting(S3Object::key).containsExactly("c");
        assertThat(l.commonPrefixes()).extracting(CommonPrefix::prefix).containsExactly("a/", "b/", "d/");
        List<String> all = new ArrayList<>();
        String token = null;
        do {
            String t = token;
            ListObjectsV2Response page = s3.listObjectsV2(b -> b.bucket("list").maxKeys(2).continuationToken(t));
            page.contents().forEach(o -> all.add(o.key()));
            token = page.nextContinuationToken();
        } while (token != null);
        assertThat(all).containsExactly("a/1", "a/2", "b/1", "c", "d/e/f");
        s3.deleteObjects(b -> b.bucket("list").delete(d -> d.objects(o -> o.key("a/1"), o -> o.key("a/2"))));
        assertThat(s3.listObjectsV2(b -> b.bucket("list").prefix("a/")).contents()).isEmpty();
    }

    @Test
    void anonymousAndWrongSecretAreRefusedAndAdminPathsAreOpen() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> anon = http.send(HttpRequest.newBuilder(URI.create(cluster.endpoint() + "/")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(anon.statusCode()).isEqualTo(403);
        assertThat(anon.body()).contains("<Code>AccessDenied</Code>");
        assertThat(anon.headers().firstValue("x-amz-request-id")).isPresent();
        HttpResponse<String> big = http.send(HttpRequest.newBuilder(URI.create(cluster.endpoint() + "/b1b/k"))
                .header("x-big", "x".repeat(20_000)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(big.statusCode()).isEqualTo(400);
        assertThat(big.body()).contains("<Code>RequestHeaderSectionTooLarge</Code>");
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(cluster.endpoint() + "/_hayloft/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create(cluster.endpoint() + "/_hayloft/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body()).contains("hayloft_s3_requests_seconds_count{op=\"ListBuckets\",status=\"403\"}");
        try (S3Client wrong = S3Client.builder().endpointOverride(URI.create(cluster.endpoint())).region(Region.US_EAST_1)
                .forcePathStyle(true).credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        GatewayCluster.ACCESS_KEY, "not-the-secret"))).build()) {
            assertThatThrownBy(wrong::listBuckets).isInstanceOfSatisfying(S3Exception.class,
                    e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("SignatureDoesNotMatch"));
        }
    }
}
