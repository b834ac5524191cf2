package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.s3.S3Config;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.MetadataDirective;

/**
 * Small objects kept inline (docs/s3.md "Small objects inline"), through the AWS SDK with its default
 * integrity protections: every size around the gateway's default {@code inlineBytes} (0, 1, 4095,
 * 4096, 4097) reads back byte-exact, whole and in ranges (first byte, last byte, a suffix); an object
 * at most {@code inlineBytes} long is held by the directory with no chunk, a longer one as chunks;
 * copies from an inline source (CopyObject, UploadPartCopy) and overwrites in both directions hold
 * the right bytes, and a delete leaves nothing.
 */
class InlineObjectsTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();
    private static final int INLINE = new S3Config().inlineBytes;

    private static String bucket;
    private static NamespaceClient namespace;

    @BeforeAll
    static void setUp() {
        bucket = S3.bucket("inline");
        namespace = new NamespaceClient(new DirectoryClient(HttpTransport.create(), List.of(S3.cluster().directoryAddress()), null));
    }

    private static S3Client s3() {
        return S3.s3();
    }

    private static ObjectRecord record(String key) {
        return namespace.object(bucket, key).join();
    }

    private static byte[] get(String key) {
        return s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
    }

    private static byte[] range(String key, String range) {
        return s3().getObjectAsBytes(b -> b.bucket(bucket).key(key).range(range)).asByteArray();
    }

    @Test
    void everySizeAroundTheThresholdReadsBackAndOnlySmallOnesAreInline() {
        for (int size : new int[] {0, 1, 2, INLINE - 1, INLINE, INLINE + 1, SdkCluster.CHUNK + 1}) {
            String key = "sizes/ünï " + size;
            byte[] data = Digests.bytes(size, size);
            assertThat(s3().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(data)).eTag())
                    .isEqualTo(Digests.etag(data));
            assertThat(get(key)).as("size %d", size).isEqualTo(data);
            assertThat(s3().headObject(b -> b.bucket(bucket).key(key)).contentLength()).isEqualTo(size);
            ObjectRecord o = record(key);
            if (size > 0 && size <= INLINE) {
                assertThat(o.chunks()).as("size %d: no needle", size).isEmpty();
                assertThat(o.inline()).as("size %d", size).isEqualTo(data);
            } else {
                assertThat(o.inline()).as("size %d", size).isNull();
                assertThat(o.chunks().size()).as("size %d", size).isEqualTo((size + SdkCluster.CHUNK - 1) / SdkCluster.CHUNK);
            }
            if (size >= 2) {
                assertThat(range(key, "bytes=0-0")).containsExactly(data[0]);
                assertThat(range(key, "bytes=" + (size - 1) + "-")).containsExactly(data[size - 1]);
                assertThat(range(key, "bytes=-2")).isEqualTo(Arrays.copyOfRange(data, size - 2, size));
                assertThat(range(key, "bytes=1-" + (size * 2))).isEqualTo(Arrays.copyOfRange(data, 1, size));
            }
        }
    }

    @Test
    void overwritesAndDeletesMoveBetweenInlineAndChunks() {
        byte[] small = Digests.bytes(80, INLINE);
        byte[] big = Digests.bytes(81, INLINE + 1);
        s3().putObject(b -> b.bucket(bucket).key("flip"), RequestBody.fromBytes(small));
        s3().putObject(b -> b.bucket(bucket).key("flip"), RequestBody.fromBytes(big));
        assertThat(get("flip")).isEqualTo(big);
        assertThat(record("flip").inline()).isNull();
        s3().putObject(b -> b.bucket(bucket).key("flip"), RequestBody.fromBytes(small));
        assertThat(get("flip")).isEqualTo(small);
        assertThat(record("flip").chunks()).isEmpty();
        s3().deleteObject(b -> b.bucket(bucket).key("flip"));
        S3Errors.expect(() -> s3().getObject(b -> b.bucket(bucket).key("flip")), "NoSuchKey", 404);
        assertThat(s3().listObjectsV2(b -> b.bucket(bucket).prefix("flip")).contents()).isEmpty();
    }

    @Test
    void copiesOfAnInlineSourceHoldItsBytes() {
        byte[] data = Digests.bytes(90, 1000);
        s3().putObject(b -> b.bucket(bucket).key("copy/src").contentType("text/x-small"), RequestBody.fromBytes(data));
        s3().copyObject(b -> b.sourceBucket(bucket).sourceKey("copy/src").destinationBucket(bucket).destinationKey("copy/dst"));
        assertThat(get("copy/dst")).isEqualTo(data);
        assertThat(record("copy/dst").inline()).isEqualTo(data);
        assertThat(s3().headObject(b -> b.bucket(bucket).key("copy/dst")).contentType()).isEqualTo("text/x-small");
        s3().copyObject(b -> b.sourceBucket(bucket).sourceKey("copy/src").destinationBucket(bucket).destinationKey("copy/src")
                .metadataDirective(MetadataDirective.REPLACE).contentType("text/replaced"));
        assertThat(get("copy/src")).isEqualTo(data);

        String id = s3().createMultipartUpload(b -> b.bucket(bucket).key("copy/multi")).uploadId();
        String part = s3().uploadPartCopy(b -> b.sourceBucket(bucket).sourceKey("copy/src").destinationBucket(bucket)
                .destinationKey("copy/multi").uploadId(id).partNumber(1).copySourceRange("bytes=10-19")).copyPartResult().eTag();
        s3().completeMultipartUpload(b -> b.bucket(bucket).key("copy/multi").uploadId(id)
                .multipartUpload(m -> m.parts(CompletedPart.builder().partNumber(1).eTag(part).build())));
        assertThat(get("copy/multi")).isEqualTo(Arrays.copyOfRange(data, 10, 20));
        assertThat(record("copy/multi").inline()).as("a multipart object is made of its parts' chunks").isNull();
    }
}
