package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;

/**
 * The async client (Netty) with the SDK's own multipart uploads (no CRT): objects above 5 MiB go up as
 * concurrent 5 MiB parts, smaller ones as one PUT; both read back byte-exact.
 */
class AsyncClientTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3.bucket("async");
    }

    @Test
    void smallAndMultipartUploadsOfTheAsyncClient() throws Exception {
        byte[] small = Digests.bytes(200, 300_000);
        byte[] big = Digests.bytes(201, 2 * SdkCluster.PART + SdkCluster.CHUNK + 99);
        CompletableFuture<PutObjectResponse> p1 = S3.async().putObject(b -> b.bucket(bucket).key("small"), AsyncRequestBody.fromBytes(small));
        CompletableFuture<PutObjectResponse> p2 = S3.async().putObject(b -> b.bucket(bucket).key("big"), AsyncRequestBody.fromBytes(big));
        assertThat(p1.get(2, TimeUnit.MINUTES).eTag()).isEqualTo(Digests.etag(small));
        String bigEtag = p2.get(2, TimeUnit.MINUTES).eTag();
        assertThat(bigEtag).as("the SDK uploaded it in parts").endsWith("-3\"");
        assertThat(bigEtag).isEqualTo(Digests.multipartEtag(List.of(java.util.Arrays.copyOfRange(big, 0, SdkCluster.PART),
                java.util.Arrays.copyOfRange(big, SdkCluster.PART, 2 * SdkCluster.PART),
                java.util.Arrays.copyOfRange(big, 2 * SdkCluster.PART, big.length))));
        ResponseBytes<GetObjectResponse> got = S3.async().getObject(b -> b.bucket(bucket).key("big"),
                AsyncResponseTransformer.toBytes()).get(2, TimeUnit.MINUTES);
        assertThat(got.asByteArray()).isEqualTo(big);
        assertThat(S3.async().getObject(b -> b.bucket(bucket).key("small"), AsyncResponseTransformer.toBytes())
                .get(2, TimeUnit.MINUTES).asByteArray()).isEqualTo(small);
    }
}
