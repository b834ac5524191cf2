package io.hayloft.s3;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftException;
import io.hayloft.client.RemoteException;
import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.ErrorRenderer;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * S3's error answers: {@code <Error><Code/><Message/><Resource/><RequestId/><HostId/></Error>} with
 * {@code x-amz-request-id} and {@code x-amz-id-2}, for every failure — an {@link S3Exception}, a
 * namespace error of the directory ({@code NO_SUCH_BUCKET} to NoSuchBucket ...), the cluster
 * unreachable (503 ServiceUnavailable), and the errors server-kit's pipeline answers on its own
 * (as the server's {@link ErrorRenderer}: 431, 414, 413, 408, 503 ...). HEAD answers carry no body.
 * Thread-safe: stateless.
 */
public final class S3Errors implements ErrorRenderer {
    private static final Logger LOG = LoggerFactory.getLogger(S3Errors.class);
    private static final HexFormat HEX = HexFormat.of().withUpperCase();

    /** One S3 error: status, code, message. */
    public record Failure(int status, String code, String message) {
    }

    /** A new request id: 16 upper-case hex digits, as S3's. */
    public static String newRequestId() {
        byte[] b = new byte[8];
        ThreadLocalRandom.current().nextBytes(b);
        return HEX.formatHex(b);
    }

    /** The id the request was given (set in its headers by the handler), or a new one. */
    static String requestId(HttpRequest request) {
        String id = request == null ? null : request.headers().get(S3Request.REQUEST_ID_HEADER);
        return id == null ? newRequestId() : id;
    }

    /** Sets {@code x-amz-request-id} and {@code x-amz-id-2} on an answer. */
    public static void stamp(FullHttpResponse r, String requestId) {
        r.headers().set("x-amz-request-id", requestId);
        r.headers().set("x-amz-id-2", Base64.getEncoder().encodeToString((requestId + "/hayloft").getBytes(
                java.nio.charset.StandardCharsets.US_ASCII)));
        r.headers().set(HttpHeaderNames.SERVER, "Hayloft");
    }

    /** What S3 answers for {@code e}, whatever it is. Unexpected failures are logged. */
    public static Failure classify(Throwable e, String what) {
        Throwable t = Futures.unwrap(e);
        if (t instanceof UncheckedIOException u && u.getCause() != null) {
            t = u.getCause();
        }
        if (t instanceof S3Exception s) {
            return new Failure(s.error().status(), s.error().code(), s.getMessage());
        }
        if (t instanceof RemoteException r) {
            return remote(r, what);
        }
        if (t instanceof ApiException api) {
            return pipeline(api.error(), api.getMessage());
        }
        if (t instanceof HayloftException) {
            LOG.warn("cluster call failed serving {}", what, t);
            return of(S3Error.SERVICE_UNAVAILABLE, "the cluster could not serve the request; retry");
        }
        if (t instanceof IOException && t.getCause() instanceof HayloftException h) {
            return classify(h, what); // a chunk the cluster could not give: unreachable or busy, not a bug
        }
        if (t instanceof IOException || t instanceof UncheckedIOException) {
            LOG.warn("I/O error serving {}", what, t);
            return of(S3Error.INTERNAL_ERROR, S3Error.INTERNAL_ERROR.message());
        }
        LOG.error("internal error serving {}", what, t);
        return of(S3Error.INTERNAL_ERROR, S3Error.INTERNAL_ERROR.message());
    }

    private static Failure of(S3Error e, String message) {
        return new Failure(e.status(), e.code(), message);
    }

    /** A directory or store answer: the namespace's errors by name, the cluster unreachable or busy as 503. */
    static Failure remote(RemoteException r, String what) {
        if (r.kind() != RemoteException.Kind.ERROR) {
            LOG.warn("cluster unreachable serving {}: {}", what, r.getMessage());
            return of(S3Error.SERVICE_UNAVAILABLE, "the cluster could not be reached; retry");
        }
        String name = r.errorName() == null ? "" : r.errorName();
        String msg = r.serverMessage();
        switch (name) {
            case "NO_SUCH_BUCKET":
                return of(S3Error.NO_SUCH_BUCKET, S3Error.NO_SUCH_BUCKET.message());
            case "NO_SUCH_KEY":
                return of(S3Error.NO_SUCH_KEY, S3Error.NO_SUCH_KEY.message());
            case "NO_SUCH_UPLOAD":
                return of(S3Error.NO_SUCH_UPLOAD, S3Error.NO_SUCH_UPLOAD.message());
            case "BUCKET_EXISTS":
                return of(S3Error.BUCKET_ALREADY_OWNED_BY_YOU, S3Error.BUCKET_ALREADY_OWNED_BY_YOU.message());
            case "BUCKET_NOT_EMPTY":
                return of(S3Error.BUCKET_NOT_EMPTY, S3Error.BUCKET_NOT_EMPTY.message());
            case "PRECONDITION_FAILED":
                return of(S3Error.PRECONDITION_FAILED, S3Error.PRECONDITION_FAILED.message());
            case "INVALID_PART":
                return of(S3Error.INVALID_PART, msg == null ? S3Error.INVALID_PART.message() : msg);
            case "ENTITY_TOO_SMALL":
                return of(S3Error.ENTITY_TOO_SMALL, S3Error.ENTITY_TOO_SMALL.message());
            default:
                break;
        }
        if (r.httpStatus() == 400) {
            // the directory refused a value the gateway let through: the client's input, named
            return of(S3Error.INVALID_ARGUMENT, msg == null ? S3Error.INVALID_ARGUMENT.message() : msg);
        }
        if (r.httpStatus() == 503 || r.httpStatus() == 429) {
            return of(S3Error.SLOW_DOWN, S3Error.SLOW_DOWN.message());
        }
        if (r.isRetryable()) {
            return of(S3Error.SERVICE_UNAVAILABLE, "the cluster could not serve the request; retry");
        }
        LOG.warn("cluster error serving {}: {}", what, r.getMessage());
        return of(S3Error.INTERNAL_ERROR, S3Error.INTERNAL_ERROR.message());
    }

    /** An error of server-kit's pipeline (JSON names) as S3's code, with its status. */
    static Failure pipeline(ApiError e, String message) {
        String code;
        int status = e.status();
        if (e == CommonErrors.BODY_TOO_LARGE) {
            code = "MaxMessageLengthExceeded";
            status = 400;
        } else if (e == CommonErrors.HEADER_TOO_LARGE) {
            code = "RequestHeaderSectionTooLarge";
            status = 400;
        } else if (e == CommonErrors.URI_TOO_LONG) {
            code = "InvalidURI";
            status = 400;
        } else if (e == CommonErrors.REQUEST_TIMEOUT) {
            code = "RequestTimeout";
            status = 400;
        } else if (e == CommonErrors.OVERLOADED) {
            code = S3Error.SLOW_DOWN.code();
        } else if (e == CommonErrors.METHOD_NOT_ALLOWED) {
            code = S3Error.METHOD_NOT_ALLOWED.code();
        } else if (e == CommonErrors.FORBIDDEN) {
            code = S3Error.ACCESS_DENIED.code();
        } else if (e.status() >= 500) {
            code = S3Error.INTERNAL_ERROR.code();
        } else {
            code = e.status() == 417 ? "ExpectationFailed" : S3Error.INVALID_REQUEST.code();
        }
        return new Failure(status, code, message);
    }

    /** The XML body of an error. */
    public static byte[] body(Failure f, String resource, String requestId) {
        return new Xml.Writer("Error", false).text("Code", f.code()).text("Message", f.message())
                .text("Resource", resource).text("RequestId", requestId).text("HostId", "hayloft").bytes();
    }

    /** The whole answer to a failed request ({@code head}: no body, as for HEAD). */
    public static FullHttpResponse response(Failure f, String resource, String requestId, boolean head) {
        byte[] body = head ? new byte[0] : body(f, resource, requestId);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(f.status()),
                Unpooled.wrappedBuffer(body));
        if (!head) {
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, Xml.CONTENT_TYPE);
        }
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        if (f.status() == 503) {
            r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        }
        stamp(r, requestId);
        return r;
    }

    /** The answer to {@code e} failing {@code request}. */
    public static FullHttpResponse response(Throwable e, S3Request request) {
        Failure f = classify(e, request.toString());
        return response(f, request.resource(), request.requestId(), "HEAD".equals(request.method()));
    }

    private static String resource(HttpRequest request) {
        if (request == null) {
            return "/";
        }
        String uri = request.uri();
        int q = uri.indexOf('?');
        return q < 0 ? uri : uri.substring(0, q);
    }

    private static boolean isHead(HttpRequest request) {
        return request != null && HttpMethod.HEAD.equals(request.method());
    }

    @Override
    public FullHttpResponse error(HttpRequest request, ApiError error, String message) {
        return response(pipeline(error, message), resource(request), requestId(request), isHead(request));
    }

    @Override
    public FullHttpResponse failure(HttpRequest request, Throwable failure) {
        String what = request == null ? "a request" : request.method() + " " + resource(request);
        return response(classify(failure, what), resource(request), requestId(request), isHead(request));
    }
}
