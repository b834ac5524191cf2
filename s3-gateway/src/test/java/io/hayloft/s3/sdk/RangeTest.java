package io.hayloft.s3.sdk;

import static io.hayloft.s3.sdk.S3Errors.expect;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;

/**
 * GetObject with {@code Range} across the gateway's chunk edges (1 MiB) and a multipart object's part
 * edges (5 MiB parts of 1 MiB chunks, so part edges are also chunk edges, and a last part that is not),
 * with S3's answers: 206 and Content-Range, suffix and open ranges, a range past the end truncated,
 * a range that starts past the end refused with InvalidRange (416).
 */
class RangeTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static final int C = SdkCluster.CHUNK;
    private static String bucket;
    private static byte[] single;
    private static byte[] multi;

    @BeforeAll
    static void objects() {
        bucket = S3.bucket("ranges");
        single = Digests.bytes(10, 3 * C + 517);
        S3.s3().putObject(b -> b.bucket(bucket).key("single"), RequestBody.fromBytes(single));
        // Parts of 5 MiB + 3 bytes (so part edges fall inside chunks too), 5 MiB, and 777 bytes.
        List<byte[]> parts = List.of(Digests.bytes(11, SdkCluster.PART + 3), Digests.bytes(12, SdkCluster.PART),
                Digests.bytes(13, 777));
        String id = S3.s3().createMultipartUpload(b -> b.bucket(bucket).key("multi")).uploadId();
        List<CompletedPart> done = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            int n = i + 1;
            String etag = S3.s3().uploadPart(b -> b.bucket(bucket).key("multi").uploadId(id).partNumber(n),
                    RequestBody.fromBytes(parts.get(n - 1))).eTag();
            done.add(CompletedPart.builder().partNumber(n).eTag(etag).build());
        }
        S3.s3().completeMultipartUpload(b -> b.bucket(bucket).key("multi").uploadId(id).multipartUpload(m -> m.parts(done)));
        multi = Digests.concat(parts);
    }

    private static void checkRange(String key, byte[] all, String range, long first, long last) {
        ResponseBytes<GetObjectResponse> r = S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key(key).range(range));
        assertThat(r.asByteArray()).as("%s %s", key, range).isEqualTo(Arrays.copyOfRange(all, (int) first, (int) last + 1));
        assertThat(r.response().contentRange()).as("%s %s", key, range).isEqualTo("bytes " + first + "-" + last + "/" + all.length);
        assertThat(r.response().contentLength()).isEqualTo(last - first + 1);
    }

    private static void check(String key, byte[] all, long first, long last) {
        checkRange(key, all, "bytes=" + first + "-" + last, first, last);
    }

    @Test
    void rangesAcrossChunkEdges() {
        int n = single.length;
        check("single", single, 0, 0);
        check("single", single, 0, C - 1);
        check("single", single, C - 1, C);
        check("single", single, C, C);
        check("single", single, C - 10, 2 * C + 10);
        check("single", single, 1, n - 2);
        check("single", single, 3 * C, n - 1);
        check("single", single, n - 1, n - 1);
        check("single", single, 0, n - 1);
        // Suffix, open-ended, and an end past the object's (truncated to it).
        checkRange("single", single, "bytes=-1", n - 1, n - 1);
        checkRange("single", single, "bytes=-" + (C + 600), n - C - 600, n - 1);
        checkRange("single", single, "bytes=-" + (n + 5000), 0, n - 1);
        checkRange("single", single, "bytes=" + (2 * C - 1) + "-", 2 * C - 1, n - 1);
        checkRange("single", single, "bytes=" + (C + 5) + "-" + (10L * n), C + 5, n - 1);
    }

    @Test
    void rangesAcrossPartEdges() {
        int p1 = SdkCluster.PART + 3;
        int p2 = p1 + SdkCluster.PART;
        int n = multi.length;
        check("multi", multi, p1 - 1, p1);
        check("multi", multi, p1 - C, p1 + C);
        check("multi", multi, 0, p2);
        check("multi", multi, p2 - 1, n - 1);
        check("multi", multi, p2, p2);
        check("multi", multi, 5 * C - 1, 5 * C + 1);
        checkRange("multi", multi, "bytes=-800", n - 800, n - 1);
        checkRange("multi", multi, "bytes=" + (p1 - 2) + "-", p1 - 2, n - 1);
        assertThat(S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key("multi")).asByteArray()).isEqualTo(multi);
    }

    @Test
    void aPartIsReadByItsNumber() {
        int p1 = SdkCluster.PART + 3;
        int p2 = p1 + SdkCluster.PART;
        ResponseBytes<GetObjectResponse> part2 = S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key("multi").partNumber(2));
        assertThat(part2.asByteArray()).isEqualTo(Arrays.copyOfRange(multi, p1, p2));
        assertThat(part2.response().partsCount()).isEqualTo(3);
    }

    @Test
    void aRangeThatStartsPastTheEndIsInvalidRange() {
        int n = single.length;
        expect(() -> S3.s3().getObject(b -> b.bucket(bucket).key("single").range("bytes=" + n + "-")), "InvalidRange", 416);
        expect(() -> S3.s3().getObject(b -> b.bucket(bucket).key("single").range("bytes=" + (n + 10) + "-" + (n + 20))),
                "InvalidRange", 416);
    }
}
