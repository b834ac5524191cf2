package io.hayloft.s3.checksum;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BodyChecksumsTest {
    static final byte[] BODY = "hello world".getBytes(StandardCharsets.US_ASCII);
    static final String CRC32 = "DUoRhQ==";
    static final String MD5 = Base64.getEncoder().encodeToString(Checksums.md5().digest(BODY));

    static S3Error errorOf(Runnable r) {
        try {
            r.run();
        } catch (S3Exception e) {
            return e.error();
        }
        return null;
    }

    static BodyChecksums.Result run(HttpHeaders h, Map<String, String> trailers, ChecksumAlgorithm dflt) {
        BodyChecksums c = BodyChecksums.forRequest(h, dflt);
        c.update(Unpooled.wrappedBuffer(BODY, 0, 4));
        c.update(BODY, 4, 3);
        c.update(java.nio.ByteBuffer.wrap(BODY, 7, 4));
        assertThat(c.bytes()).isEqualTo(BODY.length);
        return c.finish(trailers);
    }

    static HttpHeaders h(String... kv) {
        HttpHeaders h = new DefaultHttpHeaders();
        for (int i = 0; i < kv.length; i += 2) {
            h.add(kv[i], kv[i + 1]);
        }
        return h;
    }

    @Test
    void nothingPromised() {
        BodyChecksums.Result r = run(h(), Map.of(), null);
        assertThat(r.etag()).isEqualTo("5eb63bbbe01eeed093cb22bb8f5acdc3");
        assertThat(r.algorithm()).isNull();
        assertThat(r.checksumBase64()).isNull();
        BodyChecksums.Result d = run(h(), Map.of(), ChecksumAlgorithm.CRC64NVME);
        assertThat(d.algorithm()).isEqualTo(ChecksumAlgorithm.CRC64NVME);
        assertThat(d.clientProvided()).isFalse();
        assertThat(d.checksum()).hasSize(8);
    }

    @Test
    void headerAndTrailerChecksumsAndContentMd5() {
        BodyChecksums.Result r = run(h("Content-MD5", MD5, "x-amz-checksum-crc32", CRC32, "x-amz-sdk-checksum-algorithm", "CRC32"),
                Map.of(), ChecksumAlgorithm.CRC64NVME);
        assertThat(r.algorithm()).isEqualTo(ChecksumAlgorithm.CRC32);
        assertThat(r.clientProvided()).isTrue();
        assertThat(r.checksumBase64()).isEqualTo(CRC32);
        BodyChecksums.Result t = run(h("x-amz-trailer", "x-amz-checksum-crc32", "x-amz-sdk-checksum-algorithm", "crc32"),
                Map.of("x-amz-checksum-crc32", CRC32), null);
        assertThat(t.checksumBase64()).isEqualTo(CRC32);
        assertThat(BodyChecksums.forRequest(h("x-amz-trailer", "x-amz-checksum-crc32"), null).trailer()).isTrue();
        // mismatches
        assertThat(errorOf(() -> run(h("x-amz-checksum-crc32", "DUoRhA=="), Map.of(), null))).isEqualTo(S3Error.BAD_DIGEST);
        assertThat(errorOf(() -> run(h("x-amz-trailer", "x-amz-checksum-crc32"), Map.of("x-amz-checksum-crc32", "DUoRhA=="), null)))
                .isEqualTo(S3Error.BAD_DIGEST);
        assertThat(errorOf(() -> run(h("Content-MD5", Base64.getEncoder().encodeToString(new byte[16])), Map.of(), null)))
                .isEqualTo(S3Error.BAD_DIGEST);
        // malformed or contradictory promises
        assertThat(errorOf(() -> run(h("Content-MD5", "abc"), Map.of(), null))).isEqualTo(S3Error.INVALID_DIGEST);
        assertThat(errorOf(() -> run(h("x-amz-checksum-crc32", "abc"), Map.of(), null))).isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> run(h("x-amz-checksum-crc32", CRC32, "x-amz-checksum-crc32c", "AAAAAA=="), Map.of(), null)))
                .isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> run(h("x-amz-checksum-crc32", CRC32, "x-amz-trailer", "x-amz-checksum-crc32"), Map.of(), null)))
                .isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> run(h("x-amz-trailer", "x-amz-meta-foo"), Map.of(), null))).isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> run(h("x-amz-trailer", "x-amz-checksum-crc32"), Map.of(), null))).isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> run(h("x-amz-sdk-checksum-algorithm", "CRC32"), Map.of(), null))).isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> run(h("x-amz-sdk-checksum-algorithm", "CRC32C", "x-amz-checksum-crc32", CRC32), Map.of(), null)))
                .isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> run(h("x-amz-sdk-checksum-algorithm", "MD5", "x-amz-checksum-crc32", CRC32), Map.of(), null)))
                .isEqualTo(S3Error.INVALID_REQUEST);
        // headers that look like checksums but are not values
        assertThat(run(h("x-amz-checksum-mode", "ENABLED", "x-amz-checksum-type", "FULL_OBJECT", "x-amz-checksum-algorithm", "CRC32"),
                Map.of(), null).algorithm()).isNull();
    }
}
