package io.hayloft.s3.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The examples of the AWS S3 documentation ("Signature Calculations for the Authorization Header",
 * "Query String Authentication", "Signature Calculations ... Transferring Payload in Multiple Chunks"):
 * the exact requests, keys and signatures AWS publishes.
 */
class AwsExamplesTest {
    static final String ACCESS = "AKIAIOSFODNN7EXAMPLE";
    static final String SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    static final Instant WHEN = Instant.parse("2013-05-24T00:00:00Z");
    static final String EMPTY = SigV4.EMPTY_SHA256;

    static SigV4Verifier verifier(Instant now) {
        return new SigV4Verifier(Map.of(ACCESS, SECRET), "us-east-1", Clock.fixed(now, ZoneOffset.UTC));
    }

    static HttpHeaders headers(String... kv) {
        HttpHeaders h = new DefaultHttpHeaders();
        for (int i = 0; i < kv.length; i += 2) {
            h.add(kv[i], kv[i + 1]);
        }
        return h;
    }

    static String auth(String signedHeaders, String signature) {
        return "AWS4-HMAC-SHA256 Credential=" + ACCESS + "/20130524/us-east-1/s3/aws4_request,SignedHeaders=" + signedHeaders
                + ",Signature=" + signature;
    }

    @Test
    void getObject() {
        Verified v = verifier(WHEN).verify("GET", "/test.txt", null, headers(
                "Host", "examplebucket.s3.amazonaws.com", "Range", "bytes=0-9", "x-amz-content-sha256", EMPTY,
                "x-amz-date", "20130524T000000Z",
                "Authorization", auth("host;range;x-amz-content-sha256;x-amz-date",
                        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")));
        assertThat(v.accessKey()).isEqualTo(ACCESS);
        assertThat(v.mode()).isEqualTo(PayloadMode.SIGNED);
        assertThat(v.payloadSha256()).isEqualTo(EMPTY);
        assertThat(v.scope()).isEqualTo("20130524/us-east-1/s3/aws4_request");
        assertThat(v.toString()).doesNotContain(SECRET);
    }

    @Test
    void putObject() {
        byte[] body = "Welcome to Amazon S3.".getBytes(StandardCharsets.US_ASCII);
        String sha = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
        Verified v = verifier(WHEN).verify("PUT", "/test%24file.text", "", headers(
                "Host", "examplebucket.s3.amazonaws.com", "Date", "Fri, 24 May 2013 00:00:00 GMT",
                "x-amz-date", "20130524T000000Z", "x-amz-storage-class", "REDUCED_REDUNDANCY", "x-amz-content-sha256", sha,
                "Authorization", auth("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
                        "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")));
        assertThat(v.mode()).isEqualTo(PayloadMode.SIGNED);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PayloadDecoder d = PayloadDecoder.of(v, -1, b -> out.writeBytes(ByteBufs.bytes(b)));
        d.feed(Unpooled.wrappedBuffer(body, 0, 7));
        d.feed(Unpooled.wrappedBuffer(body, 7, body.length - 7));
        assertThat(d.finish(new DefaultHttpHeaders())).isEmpty();
        assertThat(out.toByteArray()).isEqualTo(body);
        assertThat(d.decodedBytes()).isEqualTo(body.length);

        PayloadDecoder bad = PayloadDecoder.of(v, -1, b -> { });
        bad.feed(Unpooled.wrappedBuffer("Welcome to Amazon S4.".getBytes(StandardCharsets.US_ASCII)));
        assertThatThrownBy(() -> bad.finish(new DefaultHttpHeaders())).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.X_AMZ_CONTENT_SHA256_MISMATCH));
    }

    @Test
    void getBucketLifecycle() {
        verifier(WHEN).verify("GET", "/", "lifecycle", headers(
                "Host", "examplebucket.s3.amazonaws.com", "x-amz-date", "20130524T000000Z", "x-amz-content-sha256", EMPTY,
                "Authorization", auth("host;x-amz-content-sha256;x-amz-date",
                        "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")));
    }

    @Test
    void listObjects() {
        String a = auth("host;x-amz-content-sha256;x-amz-date", "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
        HttpHeaders h = headers("Host", "examplebucket.s3.amazonaws.com", "x-amz-date", "20130524T000000Z",
                "x-amz-content-sha256", EMPTY, "Authorization", a);
        verifier(WHEN).verify("GET", "/", "max-keys=2&prefix=J", h);
        // the parameters' order in the URL does not matter: the canonical query sorts them
        verifier(WHEN).verify("GET", "/", "prefix=J&max-keys=2", h);
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/", "max-keys=2&prefix=K", h)).isInstanceOfSatisfying(
                S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH));
    }

    static final String PRESIGNED = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1"
            + "%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";

    @Test
    void presignedUrl() {
        HttpHeaders h = headers("Host", "examplebucket.s3.amazonaws.com");
        Verified v = verifier(WHEN.plusSeconds(3600)).verify("GET", "/test.txt", PRESIGNED, h);
        assertThat(v.mode()).isEqualTo(PayloadMode.UNSIGNED);
        assertThat(v.accessKey()).isEqualTo(ACCESS);
        verifier(WHEN.plusSeconds(86400)).verify("GET", "/test.txt", PRESIGNED, h);
        assertThatThrownBy(() -> verifier(WHEN.plusSeconds(86401)).verify("GET", "/test.txt", PRESIGNED, h))
                .isInstanceOfSatisfying(S3Exception.class, e -> {
                    assertThat(e.error()).isEqualTo(S3Error.ACCESS_DENIED);
                    assertThat(e.getMessage()).isEqualTo("Request has expired");
                });
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED.replace("86400", "86401"), h))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH));
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED.replace("86400", "604801"), h))
                .isInstanceOfSatisfying(S3Exception.class,
                        e -> assertThat(e.error()).isEqualTo(S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR));
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED.replace("86400", "0"), h))
                .isInstanceOfSatisfying(S3Exception.class,
                        e -> assertThat(e.error()).isEqualTo(S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR));
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED.replace("&X-Amz-SignedHeaders=host", ""), h))
                .isInstanceOfSatisfying(S3Exception.class,
                        e -> assertThat(e.error()).isEqualTo(S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR));
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED.replace("us-east-1", "eu-west-1"), h))
                .isInstanceOfSatisfying(S3Exception.class,
                        e -> assertThat(e.error()).isEqualTo(S3Error.AUTHORIZATION_HEADER_MALFORMED));
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED.replace("AKIAIOSFODNN7EXAMPLE", "NOBODY"), h))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_ACCESS_KEY_ID));
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED + "&extra=1", h))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH));
        assertThatThrownBy(() -> verifier(WHEN).verify("GET", "/test.txt", PRESIGNED,
                headers("Host", "examplebucket.s3.amazonaws.com", "Authorization", auth("host", EMPTY))))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_ARGUMENT));
    }

    static final String SEED = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
    static final String[] CHUNK_SIGS = {"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
        "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
        "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"};

    static Verified chunkedExample() {
        return verifier(WHEN).verify("PUT", "/examplebucket/chunkObject.txt", null, headers(
                "Host", "s3.amazonaws.com", "x-amz-date", "20130524T000000Z", "x-amz-storage-class", "REDUCED_REDUNDANCY",
                "x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "Content-Encoding", "aws-chunked",
                "x-amz-decoded-content-length", "66560", "Content-Length", "66824",
                "Authorization", auth("content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
                        + "x-amz-decoded-content-length;x-amz-storage-class", SEED)));
    }

    static byte[] chunkedBody(String[] sigs) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] a = new byte[65536];
        Arrays.fill(a, (byte) 'a');
        b.writeBytes(("10000;chunk-signature=" + sigs[0] + "\r\n").getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(a);
        b.writeBytes(("\r\n400;chunk-signature=" + sigs[1] + "\r\n").getBytes(StandardCharsets.US_ASCII));
        b.write(a, 0, 1024);
        b.writeBytes(("\r\n0;chunk-signature=" + sigs[2] + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }

    static byte[] decode(Verified v, long length, byte[] body, int... cuts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PayloadDecoder d = PayloadDecoder.of(v, length, b -> out.writeBytes(ByteBufs.bytes(b)));
        int from = 0;
        for (int cut : cuts) {
            d.feed(Unpooled.wrappedBuffer(body, from, cut - from));
            from = cut;
        }
        d.feed(Unpooled.wrappedBuffer(body, from, body.length - from));
        d.finish(new DefaultHttpHeaders());
        assertThat(d.decodedBytes()).isEqualTo(out.size());
        return out.toByteArray();
    }

    @Test
    void chunkedUploadSplitAnywhere() {
        Verified v = chunkedExample();
        assertThat(v.mode()).isEqualTo(PayloadMode.STREAMING_SIGNED);
        assertThat(v.seedSignature()).isEqualTo(SEED);
        byte[] body = chunkedBody(CHUNK_SIGS);
        assertThat(body).hasSize(66824);
        byte[] expected = new byte[66560];
        Arrays.fill(expected, (byte) 'a');
        assertThat(decode(v, 66560, body)).isEqualTo(expected);
        assertThat(decode(v, -1, body)).isEqualTo(expected);
        // one cut at every offset of the framing (first header line, the middle, the end), random elsewhere
        int mid = 88 + 65536;
        for (int cut = 1; cut < 100; cut++) {
            assertThat(decode(v, 66560, body, cut)).isEqualTo(expected);
        }
        for (int cut = mid - 5; cut < mid + 100; cut++) {
            assertThat(decode(v, 66560, body, cut)).isEqualTo(expected);
        }
        for (int cut = body.length - 100; cut < body.length; cut++) {
            assertThat(decode(v, 66560, body, cut)).isEqualTo(expected);
        }
        Random r = new Random(5);
        for (int t = 0; t < 50; t++) {
            int[] cuts = r.ints(1 + r.nextInt(20), 0, body.length + 1).sorted().toArray();
            assertThat(decode(v, 66560, body, cuts)).isEqualTo(expected);
        }
        // one byte at a time
        int[] every = new int[body.length - 1];
        for (int i = 0; i < every.length; i++) {
            every[i] = i + 1;
        }
        assertThat(decode(v, 66560, body, every)).isEqualTo(expected);
    }

    @Test
    void chunkedUploadTampered() {
        Verified v = chunkedExample();
        byte[] body = chunkedBody(CHUNK_SIGS);
        for (int at : new int[] {100, 88 + 65536 + 90, 200}) {
            byte[] t = body.clone();
            t[at] ^= 1;
            assertThatThrownBy(() -> decode(v, 66560, t)).isInstanceOfSatisfying(S3Exception.class,
                    e -> assertThat(e.error()).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH));
        }
        String[] wrongFinal = CHUNK_SIGS.clone();
        wrongFinal[2] = wrongFinal[2].replace('b', 'c');
        assertThatThrownBy(() -> decode(v, 66560, chunkedBody(wrongFinal))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH));
        assertThatThrownBy(() -> decode(v, 66561, body)).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.INCOMPLETE_BODY));
        assertThatThrownBy(() -> decode(v, 66559, body)).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.INCOMPLETE_BODY));
        // the chunks' order matters: the signatures chain
        String[] swapped = {CHUNK_SIGS[1], CHUNK_SIGS[0], CHUNK_SIGS[2]};
        assertThatThrownBy(() -> decode(v, 66560, chunkedBody(swapped))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH));
    }

    /** Copies of ByteBuf contents (the sink's slices are only valid during the call). */
    static final class ByteBufs {
        static byte[] bytes(ByteBuf b) {
            byte[] out = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), out);
            return out;
        }
    }
}
