package io.hayloft.s3;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.DirectoryException;
import io.hayloft.client.RemoteException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.errors.DirectoryErrors;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** Every failure as S3's XML error with its code, status and request id. */
class S3ErrorsTest {

    private static DirectoryException directory(String name, int status) {
        return new DirectoryException("dir", RemoteException.Kind.ERROR, status, 240, name, "msg", "msg", null);
    }

    @Test
    void namespaceErrorsMapToS3Codes() {
        String[][] cases = {{"NO_SUCH_BUCKET", "NoSuchBucket", "404"}, {"NO_SUCH_KEY", "NoSuchKey", "404"},
                {"NO_SUCH_UPLOAD", "NoSuchUpload", "404"}, {"BUCKET_EXISTS", "BucketAlreadyOwnedByYou", "409"},
                {"BUCKET_NOT_EMPTY", "BucketNotEmpty", "409"}, {"PRECONDITION_FAILED", "PreconditionFailed", "412"},
                {"INVALID_PART", "InvalidPart", "400"}, {"ENTITY_TOO_SMALL", "EntityTooSmall", "400"},
                {"PENDING_GONE", "InternalError", "500"}};
        for (String[] c : cases) {
            S3Errors.Failure f = S3Errors.classify(new CompletionException(directory(c[0], 409)), "test");
            assertThat(f.code()).as(c[0]).isEqualTo(c[1]);
            assertThat(f.status()).as(c[0]).isEqualTo(Integer.parseInt(c[2]));
        }
        assertThat(S3Errors.classify(directory(DirectoryErrors.NO_WRITABLE_VOLUME.name(), 503), "t").code()).isEqualTo("SlowDown");
        DirectoryException down = new DirectoryException("dir", RemoteException.Kind.UNREACHABLE, 0, 0, null, null, "down", null);
        assertThat(S3Errors.classify(down, "t")).isEqualTo(new S3Errors.Failure(503, "ServiceUnavailable",
                "the cluster could not be reached; retry"));
        assertThat(S3Errors.classify(new IllegalStateException("bug"), "t").code()).isEqualTo("InternalError");
    }

    @Test
    void errorBodyAndHeaders() {
        S3Request req = S3Request.parse(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/b1b/a%20key"), null, "ABC123");
        FullHttpResponse r = S3Errors.response(S3Error.NO_SUCH_KEY.exception(), req);
        try {
            assertThat(r.status().code()).isEqualTo(404);
            assertThat(r.headers().get("Content-Type")).isEqualTo("application/xml");
            assertThat(r.headers().get("x-amz-request-id")).isEqualTo("ABC123");
            assertThat(r.headers().get("x-amz-id-2")).isNotEmpty();
            String body = r.content().toString(StandardCharsets.UTF_8);
            Xml.Element e = Xml.parse(body.getBytes(StandardCharsets.UTF_8), "Error");
            assertThat(e.childText("Code")).isEqualTo("NoSuchKey");
            assertThat(e.childText("Message")).isEqualTo("The specified key does not exist");
            assertThat(e.childText("Resource")).isEqualTo("/b1b/a key");
            assertThat(e.childText("RequestId")).isEqualTo("ABC123");
            assertThat(e.childText("HostId")).isNotEmpty();
        } finally {
            r.release();
        }
        S3Request head = S3Request.parse(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.HEAD, "/b1b/k"), null, "X");
        FullHttpResponse h = S3Errors.response(S3Error.NO_SUCH_KEY.exception(), head);
        assertThat(h.status().code()).isEqualTo(404);
        assertThat(h.content().readableBytes()).isZero();
        assertThat(h.headers().get("x-amz-request-id")).isEqualTo("X");
        h.release();
    }

    @Test
    void pipelineErrorsAreS3Xml() {
        S3Errors renderer = new S3Errors();
        DefaultHttpRequest req = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/b1b/k?x=1");
        FullHttpResponse r = renderer.error(req, CommonErrors.HEADER_TOO_LARGE, "header block too large");
        assertThat(r.status().code()).isEqualTo(400);
        Xml.Element e = Xml.parse(r.content().toString(StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8), "Error");
        assertThat(e.childText("Code")).isEqualTo("RequestHeaderSectionTooLarge");
        assertThat(e.childText("Resource")).isEqualTo("/b1b/k");
        r.release();
        FullHttpResponse busy = renderer.error(null, CommonErrors.OVERLOADED, "busy");
        assertThat(busy.status().code()).isEqualTo(503);
        assertThat(busy.content().toString(StandardCharsets.UTF_8)).contains("<Code>SlowDown</Code>");
        busy.release();
        FullHttpResponse thrown = renderer.failure(req, S3Error.BAD_DIGEST.exception("wrong"));
        assertThat(thrown.status().code()).isEqualTo(400);
        assertThat(thrown.content().toString(StandardCharsets.UTF_8)).contains("<Code>BadDigest</Code>", "<Message>wrong</Message>");
        thrown.release();
    }
}
