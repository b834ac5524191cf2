package io.hayloft.s3.sdk;

import static io.hayloft.s3.sdk.S3Errors.expect;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListPartsResponse;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.Part;
import software.amazon.awssdk.services.s3.model.UploadPartCopyResponse;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * Multipart uploads through the Java SDK v2: create, upload (a part twice, a part broken mid-body then
 * retried), upload by copy, list parts and uploads, complete (S3's multipart ETag) and abort, and S3's
 * errors on the way: EntityTooSmall, InvalidPart, InvalidPartOrder, NoSuchUpload.
 */
class MultipartTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static final int P = SdkCluster.PART;
    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3.bucket("multipart");
    }

    private static S3Client s3() {
        return S3.s3();
    }

    private static String create(String key) {
        return s3().createMultipartUpload(b -> b.bucket(bucket).key(key)).uploadId();
    }

    private static CompletedPart upload(String key, String id, int n, byte[] data) {
        UploadPartResponse r = s3().uploadPart(b -> b.bucket(bucket).key(key).uploadId(id).partNumber(n), RequestBody.fromBytes(data));
        assertThat(r.eTag()).as("part %d's ETag is its MD5", n).isEqualTo(Digests.etag(data));
        return CompletedPart.builder().partNumber(n).eTag(r.eTag()).build();
    }

    private static CompleteMultipartUploadResponse complete(String key, String id, List<CompletedPart> parts) {
        return s3().completeMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(id).multipartUpload(m -> m.parts(parts)));
    }

    @Test
    void aMultipartUploadIsListedCompletedAndReadBack() {
        List<byte[]> data = List.of(Digests.bytes(20, P), Digests.bytes(21, P + SdkCluster.CHUNK / 2), Digests.bytes(22, 1));
        String id = create("big/object");
        List<CompletedPart> parts = new ArrayList<>();
        for (int i = 0; i < data.size(); i++) {
            parts.add(upload("big/object", id, i + 1, data.get(i)));
        }
        ListMultipartUploadsResponse uploads = s3().listMultipartUploads(b -> b.bucket(bucket).prefix("big/"));
        assertThat(uploads.uploads()).extracting(MultipartUpload::key, MultipartUpload::uploadId).contains(
                org.assertj.core.groups.Tuple.tuple("big/object", id));

        ListPartsResponse all = s3().listParts(b -> b.bucket(bucket).key("big/object").uploadId(id));
        assertThat(all.parts()).extracting(Part::partNumber).containsExactly(1, 2, 3);
        assertThat(all.parts()).extracting(Part::size).containsExactly((long) P, (long) P + SdkCluster.CHUNK / 2, 1L);
        assertThat(all.parts()).extracting(Part::eTag).containsExactly(parts.stream().map(CompletedPart::eTag).toArray(String[]::new));
        assertThat(all.isTruncated()).isFalse();
        ListPartsResponse page1 = s3().listParts(b -> b.bucket(bucket).key("big/object").uploadId(id).maxParts(2));
        assertThat(page1.parts()).extracting(Part::partNumber).containsExactly(1, 2);
        assertThat(page1.isTruncated()).isTrue();
        ListPartsResponse page2 = s3().listParts(b -> b.bucket(bucket).key("big/object").uploadId(id)
                .partNumberMarker(page1.nextPartNumberMarker()));
        assertThat(page2.parts()).extracting(Part::partNumber).containsExactly(3);
        assertThat(page2.isTruncated()).isFalse();

        CompleteMultipartUploadResponse done = complete("big/object", id, parts);
        assertThat(done.eTag()).isEqualTo(Digests.multipartEtag(data));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("big/object")).asByteArray()).isEqualTo(Digests.concat(data));
        assertThat(s3().headObject(b -> b.bucket(bucket).key("big/object")).eTag()).isEqualTo(Digests.multipartEtag(data));
        assertThat(s3().listMultipartUploads(b -> b.bucket(bucket).prefix("big/")).uploads()).isEmpty();
        expect(() -> s3().listParts(b -> b.bucket(bucket).key("big/object").uploadId(id)), "NoSuchUpload", 404);
    }

    @Test
    void aPartUploadedTwiceIsTheSecond() {
        String id = create("twice");
        byte[] first = Digests.bytes(30, P);
        byte[] second = Digests.bytes(31, P + 100);
        byte[] last = Digests.bytes(32, 10);
        upload("twice", id, 1, first);
        CompletedPart p1 = upload("twice", id, 1, second);
        CompletedPart p2 = upload("twice", id, 2, last);
        ListPartsResponse listed = s3().listParts(b -> b.bucket(bucket).key("twice").uploadId(id));
        assertThat(listed.parts()).extracting(Part::partNumber).containsExactly(1, 2);
        assertThat(listed.parts().get(0).size()).isEqualTo(second.length);
        assertThat(listed.parts().get(0).eTag()).isEqualTo(Digests.etag(second));
        // The first upload's ETag no longer names part 1.
        expect(() -> complete("twice", id, List.of(CompletedPart.builder().partNumber(1).eTag(Digests.etag(first)).build(), p2)),
                "InvalidPart", 400);
        complete("twice", id, List.of(p1, p2));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("twice")).asByteArray())
                .isEqualTo(Digests.concat(List.of(second, last)));
    }

    @Test
    void aPartWhoseUploadBreaksMidBodyIsRetried() {
        byte[] part1 = Digests.bytes(40, P + 12345);
        byte[] part2 = Digests.bytes(41, 4096);
        String id = create("broken");
        AtomicInteger streams = new AtomicInteger();
        // The body stream dies after 3 MiB (past several aws-chunked chunks and one gateway chunk).
        RequestBody breaking = RequestBody.fromContentProvider(() -> {
            streams.incrementAndGet();
            return new BreakingStream(part1, 3 << 20);
        }, part1.length, "application/octet-stream");
        try (S3Client noRetry = S3.client(io.hayloft.s3.GatewayCluster.ACCESS_KEY, io.hayloft.s3.GatewayCluster.SECRET_KEY)) {
            assertThatThrownBy(() -> noRetry.uploadPart(b -> b.bucket(bucket).key("broken").uploadId(id).partNumber(1), breaking))
                    .isInstanceOf(SdkClientException.class);
        }
        assertThat(streams.get()).isEqualTo(1);
        // Nothing of the broken body became part 1.
        assertThat(s3().listParts(b -> b.bucket(bucket).key("broken").uploadId(id)).parts()).isEmpty();
        CompletedPart p1 = upload("broken", id, 1, part1);
        CompletedPart p2 = upload("broken", id, 2, part2);
        assertThat(s3().listParts(b -> b.bucket(bucket).key("broken").uploadId(id)).parts()).extracting(Part::size)
                .containsExactly((long) part1.length, (long) part2.length);
        assertThat(complete("broken", id, List.of(p1, p2)).eTag()).isEqualTo(Digests.multipartEtag(List.of(part1, part2)));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("broken")).asByteArray())
                .isEqualTo(Digests.concat(List.of(part1, part2)));
    }

    @Test
    void uploadPartCopyTakesARangeOfAnObject() {
        byte[] source = Digests.bytes(50, P + 3 * SdkCluster.CHUNK + 11);
        s3().putObject(b -> b.bucket(bucket).key("copy/source"), RequestBody.fromBytes(source));
        String id = create("copy/target");
        UploadPartCopyResponse c1 = s3().uploadPartCopy(b -> b.sourceBucket(bucket).sourceKey("copy/source")
                .destinationBucket(bucket).destinationKey("copy/target").uploadId(id).partNumber(1)
                .copySourceRange("bytes=" + (SdkCluster.CHUNK - 1) + "-" + (SdkCluster.CHUNK - 1 + P - 1)));
        byte[] range = Arrays.copyOfRange(source, SdkCluster.CHUNK - 1, SdkCluster.CHUNK - 1 + P);
        assertThat(c1.copyPartResult().eTag()).isEqualTo(Digests.etag(range));
        UploadPartCopyResponse c2 = s3().uploadPartCopy(b -> b.sourceBucket(bucket).sourceKey("copy/source")
                .destinationBucket(bucket).destinationKey("copy/target").uploadId(id).partNumber(2));
        assertThat(c2.copyPartResult().eTag()).isEqualTo(Digests.etag(source));
        complete("copy/target", id, List.of(CompletedPart.builder().partNumber(1).eTag(c1.copyPartResult().eTag()).build(),
                CompletedPart.builder().partNumber(2).eTag(c2.copyPartResult().eTag()).build()));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("copy/target")).asByteArray())
                .isEqualTo(Digests.concat(List.of(range, source)));
    }

    @Test
    void abortedUploadsAreGone() {
        String id = create("aborted");
        upload("aborted", id, 1, Digests.bytes(60, 1000));
        String other = create("aborted");
        assertThat(other).isNotEqualTo(id);
        ListMultipartUploadsResponse both = s3().listMultipartUploads(b -> b.bucket(bucket).prefix("aborted"));
        assertThat(both.uploads()).extracting(MultipartUpload::uploadId).containsExactlyInAnyOrder(id, other);
        s3().abortMultipartUpload(b -> b.bucket(bucket).key("aborted").uploadId(id));
        assertThat(s3().listMultipartUploads(b -> b.bucket(bucket).prefix("aborted")).uploads())
                .extracting(MultipartUpload::uploadId).containsExactly(other);
        expect(() -> s3().listParts(b -> b.bucket(bucket).key("aborted").uploadId(id)), "NoSuchUpload", 404);
        expect(() -> s3().uploadPart(b -> b.bucket(bucket).key("aborted").uploadId(id).partNumber(2),
                RequestBody.fromString("late")), "NoSuchUpload", 404);
        expect(() -> complete("aborted", id, List.of(CompletedPart.builder().partNumber(1).eTag(Digests.etag(new byte[1])).build())),
                "NoSuchUpload", 404);
        expect(() -> s3().abortMultipartUpload(b -> b.bucket(bucket).key("aborted").uploadId("no-such-upload-id")),
                "NoSuchUpload", 404);
        s3().abortMultipartUpload(b -> b.bucket(bucket).key("aborted").uploadId(other));
        assertThat(s3().listMultipartUploads(b -> b.bucket(bucket).prefix("aborted")).uploads()).isEmpty();
        expect(() -> s3().getObject(b -> b.bucket(bucket).key("aborted")), "NoSuchKey", 404);
    }

    @Test
    void completeChecksThePartsAsS3Does() {
        String id = create("checked");
        CompletedPart small = upload("checked", id, 1, Digests.bytes(70, SdkCluster.CHUNK));
        CompletedPart p2 = upload("checked", id, 2, Digests.bytes(71, 10));
        // A part but the last under 5 MiB.
        expect(() -> complete("checked", id, List.of(small, p2)), "EntityTooSmall", 400);
        CompletedPart p1 = upload("checked", id, 1, Digests.bytes(72, P));
        CompletedPart p3 = upload("checked", id, 3, Digests.bytes(73, P));
        // A part never uploaded, a wrong ETag.
        expect(() -> complete("checked", id, List.of(p1, CompletedPart.builder().partNumber(4).eTag(p2.eTag()).build())),
                "InvalidPart", 400);
        expect(() -> complete("checked", id, List.of(p1, CompletedPart.builder().partNumber(2).eTag(p3.eTag()).build())),
                "InvalidPart", 400);
        // Not ascending.
        expect(() -> complete("checked", id, List.of(p3, p1)), "InvalidPartOrder", 400);
        // None of these ended the upload; a subset of the parts, with a gap, is a valid completion.
        CompleteMultipartUploadResponse done = complete("checked", id, List.of(p1, p3));
        assertThat(done.eTag()).isEqualTo(Digests.multipartEtag(List.of(Digests.bytes(72, P), Digests.bytes(73, P))));
        assertThat(s3().getObjectAsBytes(b -> b.bucket(bucket).key("checked")).asByteArray())
                .isEqualTo(Digests.concat(List.of(Digests.bytes(72, P), Digests.bytes(73, P))));
        expect(() -> s3().uploadPart(b -> b.bucket(bucket).key("checked").uploadId("never-created").partNumber(1),
                RequestBody.fromString("x")), "NoSuchUpload", 404);
    }

    /** A body that fails with an IOException after {@code limit} bytes. */
    static final class BreakingStream extends InputStream {
        private final ByteArrayInputStream in;
        private int left;

        BreakingStream(byte[] data, int limit) {
            this.in = new ByteArrayInputStream(data);
            this.left = limit;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) {
                throw new IOException("the network broke (test)");
            }
            int n = in.read(b, off, Math.min(len, left));
            left -= Math.max(n, 0);
            return n;
        }
    }
}
