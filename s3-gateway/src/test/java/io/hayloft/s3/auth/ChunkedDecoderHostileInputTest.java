package io.hayloft.s3.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * Bad aws-chunked framing: every malformed body ends in an S3Exception (never another exception, never
 * a body accepted with other bytes than were signed), and no line is buffered past its cap.
 */
class ChunkedDecoderHostileInputTest {
    static final Verified UNSIGNED_TRAILER = new Verified("k", PayloadMode.STREAMING_UNSIGNED_TRAILER, null, null,
            "20260101T000000Z", "20260101/us-east-1/s3/aws4_request", new byte[32]);

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Feeds the pieces and finishes; returns the error, or null when the body was accepted. */
    static S3Error run(Verified v, long length, byte[] body, int[] cuts, ByteArrayOutputStream out) {
        PayloadDecoder d = PayloadDecoder.of(v, length, b -> {
            byte[] copy = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), copy);
            out.writeBytes(copy);
        });
        try {
            int from = 0;
            for (int cut : cuts) {
                d.feed(Unpooled.wrappedBuffer(body, from, cut - from));
                from = cut;
            }
            d.feed(Unpooled.wrappedBuffer(body, from, body.length - from));
            d.finish(new DefaultHttpHeaders());
            return null;
        } catch (S3Exception e) {
            // once refused, it stays refused
            try {
                d.feed(Unpooled.wrappedBuffer(new byte[] {'0'}));
                fail("fed after a refusal");
            } catch (S3Exception again) {
                assertThat(again.error()).isNotNull();
            }
            return e.error();
        } catch (RuntimeException e) {
            throw new AssertionError("not an S3Exception on " + new String(body, StandardCharsets.ISO_8859_1), e);
        }
    }

    static S3Error run(Verified v, long length, String body) {
        return run(v, length, ascii(body), new int[0], new ByteArrayOutputStream());
    }

    @Test
    void wellFormedUnsignedTrailerBodies() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] body = ascii("5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n");
        assertThat(run(UNSIGNED_TRAILER, 11, body, new int[0], out)).isNull();
        assertThat(out.toString(StandardCharsets.US_ASCII)).isEqualTo("hello world");
        // upper-case hex sizes, chunk extensions ignored in the unsigned modes, no trailer, a missing final CRLF
        assertThat(run(UNSIGNED_TRAILER, 11, "B;ext=1\r\nhello world\r\n0\r\n\r\n")).isNull();
        assertThat(run(UNSIGNED_TRAILER, 11, "b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n")).isNull();
        assertThat(run(UNSIGNED_TRAILER, 0, "0\r\n\r\n")).isNull();
        assertThat(run(UNSIGNED_TRAILER, -1, "0\r\n\r\n")).isNull();
        PayloadDecoder d = PayloadDecoder.of(UNSIGNED_TRAILER, 11, b -> { });
        d.feed(Unpooled.wrappedBuffer(body));
        Map<String, String> trailers = d.finish(new DefaultHttpHeaders());
        assertThat(trailers).containsExactly(Map.entry("x-amz-checksum-crc32", "DUoRhQ=="));
    }

    @Test
    void malformedFramingIsRefusedWithS3Errors() {
        Object[][] cases = {
            {"", S3Error.INCOMPLETE_BODY},
            {"5\r\nhel", S3Error.INCOMPLETE_BODY},
            {"5\r\nhello", S3Error.INCOMPLETE_BODY},
            {"5\r\nhello\r\n", S3Error.INCOMPLETE_BODY},
            {"5\r\nhelloXY0\r\n\r\n", S3Error.INCOMPLETE_BODY},
            {"5\nhello\r\n0\r\n\r\n", S3Error.INCOMPLETE_BODY},
            {"\r\nhello\r\n0\r\n\r\n", S3Error.INVALID_REQUEST},
            {"-5\r\nhello\r\n0\r\n\r\n", S3Error.INVALID_REQUEST},
            {"0x5\r\nhello\r\n0\r\n\r\n", S3Error.INVALID_REQUEST},
            {" 5\r\nhello\r\n0\r\n\r\n", S3Error.INVALID_REQUEST},
            {"ffffffffffffffffffff\r\n", S3Error.INVALID_REQUEST},
            {"fffffffffffffff\r\n", S3Error.INCOMPLETE_BODY}, // more than x-amz-decoded-content-length
            {"6\r\nhello \r\n0\r\n\r\n", S3Error.INCOMPLETE_BODY},
            {"4\r\nhell\r\n0\r\n\r\n", S3Error.INCOMPLETE_BODY},
            {"5\r\nhello\r\n0\r\nno-colon\r\n\r\n", S3Error.INVALID_REQUEST},
            {"5\r\nhello\r\n0\r\n:empty-name\r\n\r\n", S3Error.INVALID_REQUEST},
            {"5\r\nhello\r\n0\r\nx-amz-trailer-signature:abc\r\n\r\n", S3Error.INVALID_REQUEST},
            {"5\r\nhello\r\n0\r\n\r\nextra", S3Error.INVALID_REQUEST},
            {"5\r\nhello\r\n0\r\n\r\n\r\n", S3Error.INVALID_REQUEST},
            {"5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r", S3Error.INCOMPLETE_BODY},
        };
        for (Object[] c : cases) {
            String body = (String) c[0];
            assertThat(run(UNSIGNED_TRAILER, 5, body)).as(body.replace("\r", "\\r").replace("\n", "\\n")).isEqualTo(c[1]);
            // the same, one byte at a time
            byte[] b = ascii(body);
            int[] every = new int[Math.max(0, b.length - 1)];
            Arrays.setAll(every, i -> i + 1);
            assertThat(run(UNSIGNED_TRAILER, 5, b, every, new ByteArrayOutputStream())).isEqualTo(c[1]);
        }
    }

    @Test
    void linesAreCappedNotBuffered() {
        // a size line that never ends: refused once past the cap, however it arrives
        PayloadDecoder d = PayloadDecoder.of(UNSIGNED_TRAILER, -1, b -> { });
        byte[] f = new byte[1024];
        Arrays.fill(f, (byte) '0');
        S3Error e = null;
        for (int i = 0; i < 1000 && e == null; i++) {
            try {
                d.feed(Unpooled.wrappedBuffer(f));
            } catch (S3Exception x) {
                e = x.error();
                assertThat(i).isLessThanOrEqualTo(AwsChunkedDecoder.MAX_LINE / 1024);
            }
        }
        assertThat(e).isEqualTo(S3Error.INVALID_REQUEST);
        // a trailer of many short lines: the block is capped too
        StringBuilder t = new StringBuilder("0\r\n");
        for (int i = 0; i < 500; i++) {
            t.append("x-amz-meta-").append(i).append(":v\r\n");
        }
        assertThat(run(UNSIGNED_TRAILER, 0, t.append("\r\n").toString())).isEqualTo(S3Error.INVALID_REQUEST);
        // a trailer in a mode that has none
        Verified signed = AwsExamplesTest.chunkedExample();
        assertThat(run(signed, 66560, "0;chunk-signature=" + "0".repeat(64) + "\r\n\r\n")).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
        assertThat(run(signed, 66560, "10000\r\n")).isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(run(signed, 66560, "10000;chunk-signature=abc\r\n")).isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(run(signed, 66560, "10000;other=" + "0".repeat(64) + "\r\n")).isEqualTo(S3Error.INVALID_REQUEST);
    }

    @Test
    void randomMutationsOfValidBodiesNeverEscapeAsOtherExceptions() {
        Random r = new Random(2027);
        List<Object[]> valid = new ArrayList<>(); // {Verified, length, body, data}
        byte[] example = AwsExamplesTest.chunkedBody(AwsExamplesTest.CHUNK_SIGS);
        byte[] exampleData = new byte[66560];
        Arrays.fill(exampleData, (byte) 'a');
        valid.add(new Object[] {AwsExamplesTest.chunkedExample(), 66560L, example, exampleData});
        valid.add(new Object[] {UNSIGNED_TRAILER, 11L, ascii("5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n"),
            ascii("hello world")});
        SdkCrossCheckTest sdk = new SdkCrossCheckTest();
        for (boolean signedChunks : new boolean[] {true, false}) {
            byte[] data = new byte[70_000];
            r.nextBytes(data);
            SdkHttpRequest req = sdk.randomRequest(r, SdkHttpMethod.PUT).putHeader("Content-Length", "70000").build();
            SdkCrossCheckTest.Signed s = SdkCrossCheckTest.received(
                    sdk.sign(req, data, signedChunks, true, DefaultChecksumAlgorithm.CRC32C));
            valid.add(new Object[] {sdk.verifier.verify(s.method(), s.path(), s.query(), s.headers()), 70_000L, s.body(), data});
        }
        int accepted = 0;
        for (int t = 0; t < 1500; t++) {
            Object[] v = valid.get(t % valid.size());
            Verified verified = (Verified) v[0];
            byte[] body = mutate((byte[]) v[2], r);
            int[] cuts = r.ints(r.nextInt(8), 0, body.length + 1).sorted().toArray();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            S3Error e = run(verified, (Long) v[1], body, cuts, out);
            if (e == null) {
                accepted++;
                if (verified.mode() != PayloadMode.STREAMING_UNSIGNED_TRAILER) {
                    // a signed body that passed holds exactly the signed bytes
                    assertThat(out.toByteArray()).isEqualTo((byte[]) v[3]);
                }
            }
        }
        assertThat(accepted).isLessThan(1500);
    }

    static byte[] mutate(byte[] b, Random r) {
        byte[] m = b.clone();
        switch (r.nextInt(5)) {
            case 0 -> m[r.nextInt(m.length)] ^= (byte) (1 << r.nextInt(8));
            case 1 -> m = Arrays.copyOf(m, r.nextInt(m.length));
            case 2 -> {
                int at = r.nextInt(m.length);
                byte[] n = new byte[m.length + 1];
                System.arraycopy(m, 0, n, 0, at);
                n[at] = (byte) "\r\n;:0aZ".charAt(r.nextInt(7));
                System.arraycopy(m, at, n, at + 1, m.length - at);
                m = n;
            }
            case 3 -> {
                int at = r.nextInt(m.length);
                byte[] n = new byte[m.length - 1];
                System.arraycopy(m, 0, n, 0, at);
                System.arraycopy(m, at + 1, n, at, m.length - at - 1);
                m = n;
            }
            default -> {
                // a byte of the framing near a CRLF
                String s = new String(m, StandardCharsets.ISO_8859_1);
                int crlf = s.indexOf("\r\n", r.nextInt(m.length));
                if (crlf > 0) {
                    m[crlf - 1 + r.nextInt(3)] ^= 0x20;
                } else {
                    m[0] ^= 1;
                }
            }
        }
        return m;
    }

    @Test
    void aFailingSinkIsNotMistakenForABadBody() {
        PayloadDecoder d = PayloadDecoder.of(UNSIGNED_TRAILER, 5, b -> {
            throw new java.io.UncheckedIOException(new java.io.IOException("the cluster is down"));
        });
        try {
            d.feed(Unpooled.wrappedBuffer(ascii("5\r\nhello\r\n0\r\n\r\n")));
            fail("the sink's failure was swallowed");
        } catch (java.io.UncheckedIOException expected) {
            assertThat(expected.getCause()).hasMessage("the cluster is down");
        }
        PayloadDecoder plain = PayloadDecoder.of(new Verified("k", PayloadMode.UNSIGNED, null, null, "", "", new byte[0]), -1,
                b -> {
                    throw new IllegalStateException("full");
                });
        try {
            plain.feed(Unpooled.wrappedBuffer(ascii("x")));
            fail("the sink's failure was swallowed");
        } catch (IllegalStateException expected) {
            assertThat(expected).hasMessage("full");
        }
    }

    @Test
    void theSinkSeesSlicesOfTheFedBufferWithoutOwnership() {
        ByteBuf piece = Unpooled.copiedBuffer("5\r\nhello\r\n0\r\n\r\n", StandardCharsets.US_ASCII);
        List<String> seen = new ArrayList<>();
        PayloadDecoder d = PayloadDecoder.of(UNSIGNED_TRAILER, 5, b -> seen.add(b.toString(StandardCharsets.US_ASCII)));
        d.feed(piece);
        d.finish(new DefaultHttpHeaders());
        assertThat(seen).containsExactly("hello");
        assertThat(piece.refCnt()).isEqualTo(1); // the caller still owns (and releases) it
        assertThat(piece.readerIndex()).isZero();
        piece.release();
    }
}
