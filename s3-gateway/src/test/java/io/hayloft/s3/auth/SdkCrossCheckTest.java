package io.hayloft.s3.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import io.hayloft.s3.checksum.ChecksumAlgorithm;
import io.hayloft.s3.checksum.Checksums;
import io.hayloft.s3.checksum.RunningChecksum;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;
import software.amazon.awssdk.services.s3.presigner.model.PresignedPutObjectRequest;

/**
 * Our verifier and decoders against the AWS SDK v2's own signer: whatever it signs (random methods,
 * paths with unicode, spaces, '+', '%' and runs of '/', query strings, header values with odd spacing,
 * every payload mode, chunked bodies with trailers) is accepted, and a one-byte change of the path,
 * the query, a signed header, the body, a chunk or the trailer is refused.
 */
class SdkCrossCheckTest {
    static final String ACCESS = "hayloft";
    static final String SECRET = "hayloft-secret-key";
    static final String REGION = "us-east-1";
    static final Instant NOW = Instant.parse("2026-11-28T04:00:00Z");
    static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
    static final String[] KEY_PIECES = {"a", "Z", "0", "photo.jpg", " ", "+", "%", "//", "///", "é", "日本語", "~", "*", "!", "$",
        "&", "'", "(", ")", ",", ";", "=", ":", "@", "-", "_", ".", "?", "#", "\u00a0", "\uD83D\uDE00", "[", "]", "^", "`",
        "{", "}", "|", "\\", "\""};
    static final String[] QUERY_NAMES = {"prefix", "delimiter", "max-keys", "uploadId", "partNumber", "acl", "list-type",
        "continuation-token", "response-content-type", "x-id", "weird name", "ü", "a+b"};

    final SigV4Verifier verifier = new SigV4Verifier(Map.of(ACCESS, SECRET, "other", "other-secret"), REGION, CLOCK);
    final AwsV4HttpSigner signer = AwsV4HttpSigner.create();

    /** A key as a path: pieces either percent-encoded or, when a path may carry them raw, as they are. */
    static String randomPath(Random r) {
        StringBuilder raw = new StringBuilder("/bucket-" + r.nextInt(10) + "/");
        int n = r.nextInt(8);
        for (int i = 0; i < n; i++) {
            String p = KEY_PIECES[r.nextInt(KEY_PIECES.length)];
            if (p.chars().allMatch(c -> c < 128 && "!$&'()*+,;=:@-._~/".indexOf(c) >= 0 || Character.isLetterOrDigit(c) && c < 128)
                    && r.nextBoolean()) {
                raw.append(p);
            } else {
                for (String seg : p.split("/", -1)) {
                    raw.append(SigV4.uriEncode(seg)).append('/');
                }
                raw.setLength(raw.length() - 1);
            }
        }
        return raw.toString();
    }

    static String randomValue(Random r) {
        StringBuilder sb = new StringBuilder();
        int n = r.nextInt(6);
        for (int i = 0; i < n; i++) {
            sb.append(KEY_PIECES[r.nextInt(KEY_PIECES.length)]);
        }
        return sb.toString();
    }

    /** A header value with leading, trailing and inner runs of spaces and tabs. */
    static String oddSpacing(Random r) {
        String[] words = {"alpha", "beta", "x=1", "", "γάμμα"};
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 1 + r.nextInt(4); i++) {
            sb.append(" ".repeat(r.nextInt(3))).append(r.nextInt(5) == 0 ? "\t" : "").append(words[r.nextInt(words.length)]);
        }
        return sb.append(" ".repeat(r.nextInt(3))).toString();
    }

    record Signed(String method, String path, String query, HttpHeaders headers, byte[] body) {
    }

    /** What a server receives: the SDK's signed request as path, raw query, headers (Host added like an HTTP client) and body. */
    static Signed received(SignedRequest s) {
        SdkHttpRequest q = s.request();
        HttpHeaders h = new DefaultHttpHeaders();
        q.forEachHeader((name, values) -> values.forEach(v -> h.add(name, v.strip())));
        if (!h.contains("host")) {
            h.add("Host", q.host() + (q.port() == 443 || q.port() == 80 ? "" : ":" + q.port()));
        }
        String query = q.getUri().getRawQuery();
        byte[] body = s.payload().map(SdkCrossCheckTest::read).orElse(new byte[0]);
        return new Signed(q.method().name(), q.encodedPath(), query, h, body);
    }

    static byte[] read(ContentStreamProvider p) {
        try (InputStream in = p.newStream()) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    SdkHttpRequest.Builder randomRequest(Random r, SdkHttpMethod method) {
        SdkHttpRequest.Builder b = SdkHttpRequest.builder().method(method).protocol("https").host("s3.hayloft.test")
                .port(r.nextBoolean() ? 443 : 9000).encodedPath(randomPath(r));
        int params = r.nextInt(4);
        for (int i = 0; i < params; i++) {
            String name = QUERY_NAMES[r.nextInt(QUERY_NAMES.length)];
            if (r.nextInt(4) == 0) {
                b.putRawQueryParameter(name, (String) null);
            } else {
                b.appendRawQueryParameter(name, randomValue(r));
            }
        }
        int metas = r.nextInt(3);
        for (int i = 0; i < metas; i++) {
            b.appendHeader("x-amz-meta-m" + i, oddSpacing(r));
        }
        if (r.nextBoolean()) {
            b.putHeader("Content-Type", "text/plain;  charset=utf-8");
        }
        return b;
    }

    SignedRequest sign(SdkHttpRequest request, byte[] body, boolean payloadSigning, boolean chunked,
                       software.amazon.awssdk.checksums.spi.ChecksumAlgorithm checksum) {
        return signer.sign(s -> {
            s.identity(AwsCredentialsIdentity.create(ACCESS, SECRET)).request(request)
                    .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                    .putProperty(AwsV4HttpSigner.REGION_NAME, REGION)
                    .putProperty(AwsV4HttpSigner.DOUBLE_URL_ENCODE, false)
                    .putProperty(AwsV4HttpSigner.NORMALIZE_PATH, false)
                    .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, payloadSigning)
                    .putProperty(AwsV4HttpSigner.CHUNK_ENCODING_ENABLED, chunked)
                    .putProperty(HttpSigner.SIGNING_CLOCK, CLOCK);
            if (body != null) {
                s.payload(ContentStreamProvider.fromByteArray(body));
            }
            if (checksum != null) {
                s.putProperty(AwsV4HttpSigner.CHECKSUM_ALGORITHM, checksum);
            }
        });
    }

    static S3Error errorOf(Runnable r) {
        try {
            r.run();
        } catch (S3Exception e) {
            return e.error();
        }
        return null;
    }

    static String tamper(String s, Random r) {
        if (s.isEmpty()) {
            return "x";
        }
        char[] c = s.toCharArray();
        int i = r.nextInt(c.length);
        c[i] = c[i] == 'x' ? 'y' : 'x';
        return new String(c);
    }

    @Test
    void headerSignedRequestsOfEveryShapeAreAcceptedAndTamperedOnesRefused() {
        Random r = new Random(27);
        SdkHttpMethod[] methods = {SdkHttpMethod.GET, SdkHttpMethod.PUT, SdkHttpMethod.POST, SdkHttpMethod.DELETE, SdkHttpMethod.HEAD};
        for (int t = 0; t < 400; t++) {
            SdkHttpMethod method = methods[r.nextInt(methods.length)];
            boolean hasBody = method == SdkHttpMethod.PUT || method == SdkHttpMethod.POST;
            byte[] body = new byte[hasBody ? r.nextInt(300) : 0];
            r.nextBytes(body);
            boolean payloadSigning = r.nextInt(3) != 0;
            SdkHttpRequest.Builder rb = randomRequest(r, method);
            if (hasBody) {
                rb.putHeader("Content-Length", Integer.toString(body.length));
            }
            Signed s = received(sign(rb.build(), hasBody ? body : null, payloadSigning, false, null));
            String what = s.method + " " + s.path + "?" + s.query + " " + s.headers;
            Verified v = verifier.verify(s.method, s.path, s.query, s.headers);
            assertThat(v.accessKey()).as(what).isEqualTo(ACCESS);
            assertThat(v.mode()).as(what).isEqualTo(payloadSigning ? PayloadMode.SIGNED : PayloadMode.UNSIGNED);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            PayloadDecoder d = PayloadDecoder.of(v, -1, b -> out.writeBytes(AwsExamplesTest.ByteBufs.bytes(b)));
            d.feed(Unpooled.wrappedBuffer(s.body));
            d.finish(new DefaultHttpHeaders());
            assertThat(out.toByteArray()).isEqualTo(body);

            // one byte of the path, of the query, of a signed header: refused
            assertThat(errorOf(() -> verifier.verify(s.method, tamper(s.path, r), s.query, s.headers))).as(what)
                    .isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
            assertThat(errorOf(() -> verifier.verify(s.method, s.path, tamper(s.query == null ? "" : s.query, r), s.headers)))
                    .as(what).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
            assertThat(errorOf(() -> verifier.verify(method == SdkHttpMethod.GET ? "HEAD" : "GET", s.path, s.query, s.headers)))
                    .isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
            for (String name : List.of("host", "x-amz-meta-m0", "content-type")) {
                if (s.headers.contains(name)) {
                    HttpHeaders h = s.headers.copy();
                    h.set(name, tamper(h.get(name).trim(), r));
                    assertThat(errorOf(() -> verifier.verify(s.method, s.path, s.query, h))).as(what + " " + name)
                            .isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
                }
            }
            if (payloadSigning && body.length > 0) {
                byte[] bad = body.clone();
                bad[r.nextInt(bad.length)] ^= 1;
                PayloadDecoder d2 = PayloadDecoder.of(v, -1, b -> { });
                d2.feed(Unpooled.wrappedBuffer(bad));
                assertThat(errorOf(() -> d2.finish(new DefaultHttpHeaders()))).isEqualTo(S3Error.X_AMZ_CONTENT_SHA256_MISMATCH);
            }
        }
    }

    @Test
    void chunkedBodiesOfEveryModeDecodeWhereverSplit() {
        Random r = new Random(72);
        software.amazon.awssdk.checksums.spi.ChecksumAlgorithm[] checksums = {null, DefaultChecksumAlgorithm.CRC32,
            DefaultChecksumAlgorithm.CRC32C, DefaultChecksumAlgorithm.SHA256, DefaultChecksumAlgorithm.SHA1};
        int[] sizes = {0, 1, 2, 100, 65535, 65536, 65537, 200_000};
        for (int t = 0; t < 60; t++) {
            int size = t < sizes.length ? sizes[t] : r.nextInt(t % 3 == 0 ? 150_000 : 5_000);
            byte[] body = new byte[size];
            r.nextBytes(body);
            var checksum = checksums[r.nextInt(checksums.length)];
            boolean signedChunks = checksum == null || r.nextBoolean();
            SdkHttpRequest req = randomRequest(r, SdkHttpMethod.PUT).putHeader("Content-Length", Integer.toString(size)).build();
            Signed s = received(sign(req, body, signedChunks, true, checksum));
            String what = s.headers.get("x-amz-content-sha256") + " " + size + " " + checksum;
            Verified v = verifier.verify(s.method, s.path, s.query, s.headers);
            PayloadMode expected = checksum == null ? PayloadMode.STREAMING_SIGNED
                    : signedChunks ? PayloadMode.STREAMING_SIGNED_TRAILER : PayloadMode.STREAMING_UNSIGNED_TRAILER;
            assertThat(v.mode()).as(what).isEqualTo(expected);
            long decodedLength = Long.parseLong(s.headers.get("x-amz-decoded-content-length"));
            assertThat(decodedLength).isEqualTo(size);

            for (int split = 0; split < 6; split++) {
                int[] cuts = split == 0 ? new int[0] : r.ints(r.nextInt(40), 0, s.body.length + 1).sorted().toArray();
                Result res = decode(v, decodedLength, s.body, cuts);
                assertThat(res.bytes).as(what).isEqualTo(body);
                if (checksum != null) {
                    ChecksumAlgorithm alg = ChecksumAlgorithm.parse(checksum.algorithmId());
                    RunningChecksum c = alg.start();
                    c.update(body, 0, body.length);
                    assertThat(res.trailers).as(what).containsEntry(alg.header(), Checksums.base64(c.digest()));
                    assertThat(res.trailers).doesNotContainKey("x-amz-trailer-signature");
                } else {
                    assertThat(res.trailers).isEmpty();
                }
            }
            // every offset of the framing bytes at the start and at the end
            int edge = size <= 70_000 ? 120 : 8; // every offset on the small bodies, a few on the large
            for (int cut = 0; cut <= Math.min(edge, s.body.length); cut++) {
                assertThat(decode(v, decodedLength, s.body, cut).bytes).isEqualTo(body);
            }
            for (int cut = Math.max(0, s.body.length - 2 * edge); cut <= s.body.length; cut++) {
                assertThat(decode(v, decodedLength, s.body, cut).bytes).isEqualTo(body);
            }

            // a byte of a chunk's data, or of the trailer
            if (size > 0) {
                byte[] bad = s.body.clone();
                int at = indexOf(bad, "\r\n".getBytes(StandardCharsets.US_ASCII), 0) + 2 + r.nextInt(Math.min(size, 65536));
                bad[at] ^= 1;
                S3Error e = errorOf(() -> decode(v, decodedLength, bad));
                if (signedChunks) {
                    assertThat(e).as(what).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
                } else {
                    assertThat(e).as(what).isNull(); // unsigned chunks: the checksum trailer catches it (the gateway checks it)
                }
            }
            if (checksum != null) {
                String text = new String(s.body, StandardCharsets.ISO_8859_1);
                int valueAt = text.lastIndexOf("x-amz-checksum-") + text.substring(text.lastIndexOf("x-amz-checksum-")).indexOf(':') + 2;
                byte[] bad = s.body.clone();
                bad[valueAt] = (byte) (bad[valueAt] == 'A' ? 'B' : 'A');
                S3Error e = errorOf(() -> decode(v, decodedLength, bad));
                assertThat(e).as(what).isEqualTo(signedChunks ? S3Error.SIGNATURE_DOES_NOT_MATCH : null);
            }
            // a body cut short, or longer than it says
            byte[] shortBody = java.util.Arrays.copyOf(s.body, s.body.length - 3);
            assertThat(errorOf(() -> decode(v, decodedLength, shortBody))).isIn(S3Error.INCOMPLETE_BODY, S3Error.INVALID_REQUEST);
            assertThat(errorOf(() -> decode(v, decodedLength + 1, s.body))).isEqualTo(S3Error.INCOMPLETE_BODY);
        }
    }

    static int indexOf(byte[] a, byte[] what, int from) {
        outer:
        for (int i = from; i <= a.length - what.length; i++) {
            for (int j = 0; j < what.length; j++) {
                if (a[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    record Result(byte[] bytes, Map<String, String> trailers) {
    }

    static Result decode(Verified v, long length, byte[] body, int... cuts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PayloadDecoder d = PayloadDecoder.of(v, length, b -> out.writeBytes(AwsExamplesTest.ByteBufs.bytes(b)));
        int from = 0;
        for (int cut : cuts) {
            d.feed(Unpooled.wrappedBuffer(body, from, cut - from));
            from = cut;
        }
        d.feed(Unpooled.wrappedBuffer(body, from, body.length - from));
        Map<String, String> trailers = d.finish(new DefaultHttpHeaders());
        return new Result(out.toByteArray(), trailers);
    }

    @Test
    void presignedUrlsOfTheS3PresignerAreAccepted() {
        SigV4Verifier live = new SigV4Verifier(Map.of(ACCESS, SECRET), REGION, Clock.systemUTC());
        Random r = new Random(9);
        try (S3Presigner presigner = S3Presigner.builder().region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS, SECRET)))
                .endpointOverride(URI.create("http://127.0.0.1:9000"))
                .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(true).build()).build()) {
            for (int t = 0; t < 100; t++) {
                String key = randomValue(r) + "k" + randomValue(r);
                PresignedGetObjectRequest get = presigner.presignGetObject(p -> p.signatureDuration(Duration.ofMinutes(10))
                        .getObjectRequest(g -> g.bucket("photos").key(key).responseContentType("text/plain; x=1")));
                check(live, "GET", get.url().toString(), get.signedHeaders(), r);
                PresignedPutObjectRequest put = presigner.presignPutObject(p -> p.signatureDuration(Duration.ofSeconds(604800))
                        .putObjectRequest(g -> g.bucket("photos").key(key).contentType("image/jpeg")));
                check(live, "PUT", put.url().toString(), put.signedHeaders(), r);
            }
        }
    }

    private void check(SigV4Verifier live, String method, String url, Map<String, List<String>> signedHeaders, Random r) {
        URI u = URI.create(url);
        HttpHeaders h = new DefaultHttpHeaders();
        signedHeaders.forEach((n, vs) -> vs.forEach(v -> h.add(n, v)));
        if (!h.contains("host")) {
            h.add("host", u.getRawAuthority());
        }
        Verified v = live.verify(method, u.getRawPath(), u.getRawQuery(), h);
        assertThat(v.mode()).isEqualTo(PayloadMode.UNSIGNED);
        assertThat(errorOf(() -> live.verify(method, tamper(u.getRawPath(), r), u.getRawQuery(), h))).as(url)
                .isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
        String q = u.getRawQuery();
        String tamperedQuery = q.replace("X-Amz-Expires=", "X-Amz-Expires=0");
        assertThat(errorOf(() -> live.verify(method, u.getRawPath(), tamperedQuery, h))).as(url)
                .isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
        HttpHeaders other = h.copy();
        other.set("host", "127.0.0.2:9000");
        assertThat(errorOf(() -> live.verify(method, u.getRawPath(), q, other))).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
    }

    @Test
    void errorsOfHeaderAuthentication() {
        Random r = new Random(1);
        SdkHttpRequest req = randomRequest(r, SdkHttpMethod.GET).build();
        Signed s = received(sign(req, null, true, false, null));
        String auth = s.headers.get("authorization");
        // anonymous
        HttpHeaders anon = s.headers.copy();
        anon.remove("authorization");
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, anon))).isEqualTo(S3Error.ACCESS_DENIED);
        // unknown key
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, with(s.headers, "authorization",
                auth.replace("Credential=hayloft/", "Credential=nobody/"))))).isEqualTo(S3Error.INVALID_ACCESS_KEY_ID);
        // another user's key, same signature: wrong
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, with(s.headers, "authorization",
                auth.replace("Credential=hayloft/", "Credential=other/"))))).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
        // wrong region
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, with(s.headers, "authorization",
                auth.replace("/us-east-1/", "/eu-west-1/"))))).isEqualTo(S3Error.AUTHORIZATION_HEADER_MALFORMED);
        // malformed
        for (String bad : new String[] {"AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 Credential=hayloft", "AWS hayloft:abc",
            auth.replace("SignedHeaders=", "Signed="), auth.replace("/s3/", "/ec2/"), auth.replace("aws4_request", "aws5_request"),
            auth.replace("host;", "").replace(";host", ""), auth.replace("/2026112", "/2026-1")}) {
            assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, with(s.headers, "authorization", bad))))
                    .as(bad).isEqualTo(S3Error.AUTHORIZATION_HEADER_MALFORMED);
        }
        // the scope's date is not x-amz-date's
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, with(s.headers, "authorization",
                auth.replace("/20261128/", "/20261127/"))))).isEqualTo(S3Error.AUTHORIZATION_HEADER_MALFORMED);
        // a signature that is not 64 hex digits
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, with(s.headers, "authorization",
                auth.substring(0, auth.length() - 1))))).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
        // skew: the request is fine 15 minutes either way, not 15 minutes and a second
        for (long sec : new long[] {-900, 900}) {
            new SigV4Verifier(Map.of(ACCESS, SECRET), REGION, Clock.fixed(NOW.plusSeconds(sec), ZoneOffset.UTC))
                    .verify("GET", s.path, s.query, s.headers);
        }
        for (long sec : new long[] {-901, 901, 86400}) {
            SigV4Verifier skewed = new SigV4Verifier(Map.of(ACCESS, SECRET), REGION, Clock.fixed(NOW.plusSeconds(sec), ZoneOffset.UTC));
            assertThat(errorOf(() -> skewed.verify("GET", s.path, s.query, s.headers))).isEqualTo(S3Error.REQUEST_TIME_TOO_SKEWED);
        }
        // x-amz-content-sha256: required, and one of the known values
        HttpHeaders noSha = s.headers.copy();
        noSha.remove("x-amz-content-sha256");
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, noSha))).isEqualTo(S3Error.INVALID_REQUEST);
        assertThat(errorOf(() -> verifier.verify("GET", s.path, s.query, with(s.headers, "x-amz-content-sha256", "STREAMING-FOO"))))
                .isEqualTo(S3Error.INVALID_ARGUMENT);
        // no message names the secret
        for (HttpHeaders h : List.of(anon, noSha, with(s.headers, "authorization", auth.replace("/us-east-1/", "/x/")))) {
            try {
                verifier.verify("GET", s.path, s.query, h);
            } catch (S3Exception e) {
                assertThat(e.getMessage()).doesNotContain(SECRET);
            }
        }
    }

    static HttpHeaders with(HttpHeaders h, String name, String value) {
        HttpHeaders c = h.copy();
        c.set(name, value);
        return c;
    }

    @Test
    void manyRequestsReuseTheCachedSigningKey() {
        List<Signed> all = new ArrayList<>();
        Random r = new Random(4);
        for (int i = 0; i < 20; i++) {
            all.add(received(sign(randomRequest(r, SdkHttpMethod.GET).build(), null, true, false, null)));
        }
        for (Signed s : all) {
            Verified v = verifier.verify(s.method, s.path, s.query, s.headers);
            assertThat(v.signingKey()).isEqualTo(SigV4.signingKey(SECRET, "20261128", REGION, "s3"));
            v.signingKey()[0] ^= 1; // a caller scribbling on its copy does not break the cache
        }
        Signed s = all.get(0);
        verifier.verify(s.method, s.path, s.query, s.headers);
    }
}
