package io.hayloft.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

/** Path-style and virtual-host addressing, decoding, S3's bucket-name and key rules, and the operation table. */
class AddressingTest {

    private static HttpRequest head(String method, String uri, String host) {
        HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(method), uri);
        if (host != null) {
            r.headers().set("Host", host);
        }
        return r;
    }

    private static S3Request parse(String method, String uri) {
        return S3Request.parse(head(method, uri, "127.0.0.1:9000"), null, "id");
    }

    private static String op(String method, String uri, String... headers) {
        HttpRequest h = head(method, uri, "127.0.0.1");
        for (int i = 0; i < headers.length; i += 2) {
            h.headers().set(headers[i], headers[i + 1]);
        }
        S3Handler.Route r = S3Handler.route(S3Request.parse(h, null, "id"));
        return r == null ? null : r.name();
    }

    @Test
    void pathStyleSplitsBucketAndKeyAndKeepsTheRawPath() {
        S3Request r = parse("GET", "/bucket/a%20b/c%2Bd+e/%E2%82%AC?list-type=2&prefix=x%2Fy+z");
        assertThat(r.bucket()).isEqualTo("bucket");
        assertThat(r.key()).isEqualTo("a b/c+d+e/\u20ac"); // '+' in a path is a plus
        assertThat(r.rawPath()).isEqualTo("/bucket/a%20b/c%2Bd+e/%E2%82%AC");
        assertThat(r.rawQuery()).isEqualTo("list-type=2&prefix=x%2Fy+z");
        assertThat(r.param("prefix")).isEqualTo("x/y z"); // '+' in a query is a space
        assertThat(r.resource()).isEqualTo("/bucket/a b/c+d+e/\u20ac");
    }

    @Test
    void runsOfSlashesAndTrailingSlashesStayInTheKey() {
        assertThat(parse("GET", "/b1b/a//b///").key()).isEqualTo("a//b///");
        assertThat(parse("GET", "/b1b//x").key()).isEqualTo("/x");
        assertThat(parse("GET", "/b1b/").key()).isNull();
        assertThat(parse("GET", "/b1b").bucket()).isEqualTo("b1b");
        S3Request service = parse("GET", "/");
        assertThat(service.bucket()).isNull();
        assertThat(service.key()).isNull();
    }

    @Test
    void badEscapesAndNonUtf8AreRefused() {
        assertThatThrownBy(() -> parse("GET", "/b1b/%zz")).isInstanceOf(S3Exception.class);
        assertThatThrownBy(() -> parse("GET", "/b1b/%C3")).isInstanceOf(S3Exception.class);
        assertThatThrownBy(() -> parse("GET", "/b1b/%FF%FE")).isInstanceOf(S3Exception.class);
    }

    @Test
    void virtualHostStyleWhenTheHostIsUnderTheDomain() {
        S3Request r = S3Request.parse(head("GET", "/photos/2024/a.jpg", "my-bucket.s3.example.com:9000"), "s3.example.com", "id");
        assertThat(r.bucket()).isEqualTo("my-bucket");
        assertThat(r.key()).isEqualTo("photos/2024/a.jpg");
        assertThat(r.rawPath()).isEqualTo("/photos/2024/a.jpg");
        S3Request bucketOnly = S3Request.parse(head("GET", "/?list-type=2", "My-Bucket.S3.Example.com"), "s3.example.com:9000", "id");
        assertThat(bucketOnly.bucket()).isEqualTo("my-bucket");
        assertThat(bucketOnly.key()).isNull();
        // the domain itself, or another host: path style
        S3Request path = S3Request.parse(head("GET", "/b1b/k", "s3.example.com:9000"), "s3.example.com", "id");
        assertThat(path.bucket()).isEqualTo("b1b");
        assertThat(path.key()).isEqualTo("k");
        assertThat(S3Request.parse(head("GET", "/b1b/k", "other.host"), "s3.example.com", "id").bucket()).isEqualTo("b1b");
        assertThat(S3Request.parse(head("GET", "/b1b/k", "x.s3.example.com"), null, "id").bucket()).isEqualTo("b1b");
    }

    @Test
    void bucketNamesFollowS3Rules() {
        for (String ok : new String[] {"abc", "a-b.c", "0ab", "my.bucket.name", "a".repeat(63), "metrics", "b1b"}) {
            assertThat(S3Request.validBucketName(ok)).as(ok).isTrue();
        }
        for (String bad : new String[] {"ab", "a".repeat(64), "Abc", "a_b", "-ab", "ab-", ".ab", "ab.", "a..b", "a.-b", "a-.b",
                "192.168.1.1", "xn--abc", "abc-s3alias", "_hayloft", "a b", "", "abc/"}) {
            assertThat(S3Request.validBucketName(bad)).as(bad).isFalse();
        }
        assertThatThrownBy(() -> S3Request.checkBucket("A")).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_BUCKET_NAME));
    }

    @Test
    void keysAreOneTo1024BytesOfUtf8() {
        S3Request.checkKey("k");
        S3Request.checkKey("a".repeat(1024));
        S3Request.checkKey("\u20ac".repeat(341)); // 1023 bytes
        assertThatThrownBy(() -> S3Request.checkKey("a".repeat(1025))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.KEY_TOO_LONG));
        assertThatThrownBy(() -> S3Request.checkKey("\u20ac".repeat(342))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.KEY_TOO_LONG)); // 1026 bytes
    }

    @Test
    void everyOperationHasItsRow() {
        assertThat(op("GET", "/")).isEqualTo("ListBuckets");
        assertThat(op("PUT", "/b1b")).isEqualTo("CreateBucket");
        assertThat(op("HEAD", "/b1b")).isEqualTo("HeadBucket");
        assertThat(op("DELETE", "/b1b")).isEqualTo("DeleteBucket");
        assertThat(op("GET", "/b1b?location")).isEqualTo("GetBucketLocation");
        assertThat(op("GET", "/b1b?list-type=2&prefix=a")).isEqualTo("ListObjectsV2");
        assertThat(op("GET", "/b1b?prefix=a&marker=b")).isEqualTo("ListObjects");
        assertThat(op("GET", "/b1b?uploads")).isEqualTo("ListMultipartUploads");
        assertThat(op("POST", "/b1b?delete")).isEqualTo("DeleteObjects");
        assertThat(op("GET", "/b1b?versioning")).isEqualTo("GetBucketVersioning");
        assertThat(op("PUT", "/b1b/k")).isEqualTo("PutObject");
        assertThat(op("PUT", "/b1b/k", "x-amz-copy-source", "/a/b")).isEqualTo("CopyObject");
        assertThat(op("GET", "/b1b/k?partNumber=2")).isEqualTo("GetObject");
        assertThat(op("GET", "/b1b/k?response-content-type=text/plain")).isEqualTo("GetObject");
        assertThat(op("HEAD", "/b1b/k")).isEqualTo("HeadObject");
        assertThat(op("DELETE", "/b1b/k")).isEqualTo("DeleteObject");
        assertThat(op("POST", "/b1b/k?uploads")).isEqualTo("CreateMultipartUpload");
        assertThat(op("PUT", "/b1b/k?partNumber=1&uploadId=u")).isEqualTo("UploadPart");
        assertThat(op("PUT", "/b1b/k?partNumber=1&uploadId=u", "x-amz-copy-source", "a/b")).isEqualTo("UploadPartCopy");
        assertThat(op("POST", "/b1b/k?uploadId=u")).isEqualTo("CompleteMultipartUpload");
        assertThat(op("DELETE", "/b1b/k?uploadId=u")).isEqualTo("AbortMultipartUpload");
        assertThat(op("GET", "/b1b/k?uploadId=u")).isEqualTo("ListParts");
        // sub-resources not served: no row
        assertThat(op("PUT", "/b1b/k?tagging")).isNull();
        assertThat(op("GET", "/b1b?versions")).isNull();
        assertThat(op("POST", "/b1b/k")).isNull();
        assertThatThrownBy(() -> S3Handler.require(parse("PUT", "/b1b?versioning"))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.NOT_IMPLEMENTED));
        assertThatThrownBy(() -> S3Handler.require(parse("POST", "/b1b/k"))).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.METHOD_NOT_ALLOWED));
    }
}
