package io.hayloft.s3.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The verifier's own rules: canonical query, presigned time window, Date-only requests, concurrency. */
class SigV4VerifierTest {
    static final String ACCESS = AwsExamplesTest.ACCESS;
    static final String SECRET = AwsExamplesTest.SECRET;

    static S3Error errorOf(Runnable r) {
        try {
            r.run();
        } catch (S3Exception e) {
            return e.error();
        }
        return null;
    }

    @Test
    void canonicalQueryEncodesSortsAndKeepsEmptyValues() {
        assertThat(SigV4.canonicalQuery(SigV4.parseQuery("b=2&a=1&a=0&acl&&c="), null)).isEqualTo("a=0&a=1&acl=&b=2&c=");
        assertThat(SigV4.canonicalQuery(SigV4.parseQuery("k=a%20b+c%2Bd%7E~%zz%2f/"), null)).isEqualTo("k=a%20b%2Bc%2Bd~~%25zz%2F%2F");
        assertThat(SigV4.canonicalQuery(SigV4.parseQuery("%C3%BC=%E6%97%A5"), null)).isEqualTo("%C3%BC=%E6%97%A5");
        assertThat(SigV4.canonicalQuery(SigV4.parseQuery("X-Amz-Signature=abc&x=1"), "X-Amz-Signature")).isEqualTo("x=1");
        assertThat(SigV4.canonicalQuery(SigV4.parseQuery(null), null)).isEmpty();
        assertThat(SigV4.uriEncode("AZaz09-_.~ /+*%é")).isEqualTo("AZaz09-_.~%20%2F%2B%2A%25%C3%A9");
        assertThat(SigV4.uriDecode("%")).isEqualTo("%");
        assertThat(SigV4.uriDecode("%4")).isEqualTo("%4");
        assertThat(SigV4.uriDecode("%41%4a%4A")).isEqualTo("AJJ");
        StringBuilder sb = new StringBuilder();
        SigV4.appendCanonicalValue(sb, " \t a  b \t\n c  ");
        assertThat(sb.toString()).isEqualTo("a b c");
    }

    @Test
    void presignedUrlsAreValidFromTheirDateUntilTheyExpire() {
        HttpHeaders h = new DefaultHttpHeaders().add("Host", "examplebucket.s3.amazonaws.com");
        Instant signed = AwsExamplesTest.WHEN;
        // up to 15 minutes early (clock skew) it passes; earlier it is not valid yet
        AwsExamplesTest.verifier(signed.minusSeconds(900)).verify("GET", "/test.txt", AwsExamplesTest.PRESIGNED, h);
        assertThat(errorOf(() -> AwsExamplesTest.verifier(signed.minusSeconds(901))
                .verify("GET", "/test.txt", AwsExamplesTest.PRESIGNED, h))).isEqualTo(S3Error.ACCESS_DENIED);
        // a malformed date
        assertThat(errorOf(() -> AwsExamplesTest.verifier(signed).verify("GET", "/test.txt",
                AwsExamplesTest.PRESIGNED.replace("20130524T000000Z", "2013-05-24"), h)))
                .isEqualTo(S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR);
        assertThat(errorOf(() -> AwsExamplesTest.verifier(signed).verify("GET", "/test.txt",
                AwsExamplesTest.PRESIGNED.replace("X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=AWS4-HMAC-SHA1"), h)))
                .isEqualTo(S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR);
        assertThat(errorOf(() -> AwsExamplesTest.verifier(signed).verify("GET", "/test.txt",
                AwsExamplesTest.PRESIGNED.replace("X-Amz-Expires=86400", "X-Amz-Expires=soon"), h)))
                .isEqualTo(S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR);
        assertThat(errorOf(() -> AwsExamplesTest.verifier(signed).verify("GET", "/test.txt",
                AwsExamplesTest.PRESIGNED.replace("20130524%2Fus", "20130525%2Fus"), h)))
                .isEqualTo(S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR);
        // another method or host
        assertThat(errorOf(() -> AwsExamplesTest.verifier(signed).verify("PUT", "/test.txt", AwsExamplesTest.PRESIGNED, h)))
                .isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
        assertThat(errorOf(() -> AwsExamplesTest.verifier(signed).verify("GET", "/test.txt", AwsExamplesTest.PRESIGNED,
                new DefaultHttpHeaders().add("Host", "otherbucket.s3.amazonaws.com")))).isEqualTo(S3Error.SIGNATURE_DOES_NOT_MATCH);
    }

    /** A request dated only by its Date header (no x-amz-date): the string to sign takes the Date in ISO form. */
    @Test
    void dateHeaderWithoutXAmzDate() {
        String canonical = "GET\n/photo\n\ndate:Fri, 24 May 2013 00:00:00 GMT\nhost:h\nx-amz-content-sha256:UNSIGNED-PAYLOAD\n\n"
                + "date;host;x-amz-content-sha256\nUNSIGNED-PAYLOAD";
        String scope = "20130524/us-east-1/s3/aws4_request";
        String sig = SigV4.sign(SigV4.signingKey(SECRET, "20130524", "us-east-1", "s3"),
                SigV4Verifier.stringToSign("20130524T000000Z", scope, canonical));
        HttpHeaders h = new DefaultHttpHeaders().add("Date", "Fri, 24 May 2013 00:00:00 GMT").add("Host", "h")
                .add("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
                .add("Authorization", "AWS4-HMAC-SHA256 Credential=" + ACCESS + "/" + scope
                        + ", SignedHeaders=date;host;x-amz-content-sha256, Signature=" + sig);
        Verified v = AwsExamplesTest.verifier(AwsExamplesTest.WHEN).verify("GET", "/photo", null, h);
        assertThat(v.mode()).isEqualTo(PayloadMode.UNSIGNED);
        assertThat(v.amzDate()).isEqualTo("20130524T000000Z");
        h.set("Date", "yesterday");
        assertThat(errorOf(() -> AwsExamplesTest.verifier(AwsExamplesTest.WHEN).verify("GET", "/photo", null, h)))
                .isEqualTo(S3Error.ACCESS_DENIED);
        h.remove("Date");
        assertThat(errorOf(() -> AwsExamplesTest.verifier(AwsExamplesTest.WHEN).verify("GET", "/photo", null, h)))
                .isEqualTo(S3Error.ACCESS_DENIED);
    }

    @Test
    void payloadModes() {
        assertThat(SigV4Verifier.payloadMode("UNSIGNED-PAYLOAD")).isEqualTo(PayloadMode.UNSIGNED);
        assertThat(SigV4Verifier.payloadMode("STREAMING-AWS4-HMAC-SHA256-PAYLOAD")).isEqualTo(PayloadMode.STREAMING_SIGNED);
        assertThat(SigV4Verifier.payloadMode("STREAMING-UNSIGNED-PAYLOAD-TRAILER")).isEqualTo(PayloadMode.STREAMING_UNSIGNED_TRAILER);
        assertThat(SigV4Verifier.payloadMode("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"))
                .isEqualTo(PayloadMode.STREAMING_SIGNED_TRAILER);
        assertThat(SigV4Verifier.payloadMode(SigV4.EMPTY_SHA256.toUpperCase())).isEqualTo(PayloadMode.SIGNED);
        for (String bad : new String[] {"", "unsigned-payload", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", SigV4.EMPTY_SHA256 + "0",
            SigV4.EMPTY_SHA256.substring(1) + "g"}) {
            assertThat(errorOf(() -> SigV4Verifier.payloadMode(bad))).as(bad).isEqualTo(S3Error.INVALID_ARGUMENT);
        }
        assertThat(PayloadMode.SIGNED.chunked()).isFalse();
        assertThat(PayloadMode.STREAMING_UNSIGNED_TRAILER.chunked()).isTrue();
    }

    @Test
    void oneVerifierServesManyThreads() throws Exception {
        SigV4Verifier v = AwsExamplesTest.verifier(AwsExamplesTest.WHEN);
        HttpHeaders good = new DefaultHttpHeaders().add("Host", "examplebucket.s3.amazonaws.com").add("Range", "bytes=0-9")
                .add("x-amz-content-sha256", SigV4.EMPTY_SHA256).add("x-amz-date", "20130524T000000Z")
                .add("Authorization", AwsExamplesTest.auth("host;range;x-amz-content-sha256;x-amz-date",
                        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
        HttpHeaders bad = good.copy().set("Range", "bytes=0-8");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                boolean ok = i % 3 != 0;
                results.add(pool.submit(() -> {
                    S3Error e = errorOf(() -> v.verify("GET", "/test.txt", null, ok ? good : bad));
                    return ok ? e == null : e == S3Error.SIGNATURE_DOES_NOT_MATCH;
                }));
            }
            for (Future<Boolean> f : results) {
                assertThat(f.get()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void verifiedNeverShowsTheSigningKey() {
        Verified v = AwsExamplesTest.chunkedExample();
        assertThat(v.toString()).isEqualTo("Verified[" + ACCESS + ", STREAMING_SIGNED]");
        assertThat(new SigV4Verifier(Map.of(ACCESS, SECRET), "eu-west-1", Clock.fixed(Instant.EPOCH, ZoneOffset.UTC)).region())
                .isEqualTo("eu-west-1");
    }
}
