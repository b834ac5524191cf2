package io.hayloft.serverkit.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.ApiException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Builds full HTTP responses: JSON bodies (via one shared Jackson mapper) and error bodies of the
 * form {@code {"error":{"code":4,"name":"BODY_TOO_LARGE","message":"..."}}}.
 *
 * <p>Thread-safe (stateless; the mapper is thread-safe). Each returned response owns its buffer: the
 * caller must write it (Netty releases it) or release it.
 */
public final class HttpResponses {
    /** The mapper every server uses for its JSON. */
    public static final ObjectMapper JSON = new ObjectMapper();

    private HttpResponses() {
    }

    public static FullHttpResponse json(HttpResponseStatus status, Object body) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
        return bytes(status, Unpooled.wrappedBuffer(bytes), "application/json");
    }

    public static FullHttpResponse error(ApiError error, String message) {
        return json(HttpResponseStatus.valueOf(error.status()), errorBody(error, message));
    }

    /** The JSON error body alone, for answers built outside a response (a cache's stored 404). */
    public static byte[] errorBytes(ApiError error, String message) {
        try {
            return JSON.writeValueAsBytes(errorBody(error, message));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode errorBody(ApiError error, String message) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode e = root.putObject("error");
        e.put("code", error.code());
        e.put("name", error.name());
        e.put("message", message);
        return root;
    }

    /**
     * The JSON error of {@code e}, with its extra fields in the error object; a {@code leader} field is
     * also sent as the header {@value #LEADER_HEADER} (a directory follower's {@code NOT_LEADER}).
     */
    public static FullHttpResponse error(ApiException e) {
        if (e.fields().isEmpty()) {
            return error(e.error(), e.getMessage());
        }
        ObjectNode root = errorBody(e.error(), e.getMessage());
        ObjectNode o = (ObjectNode) root.get("error");
        e.fields().forEach(o::put);
        FullHttpResponse r = json(HttpResponseStatus.valueOf(e.error().status()), root);
        String leader = e.fields().get("leader");
        if (leader != null) {
            r.headers().set(LEADER_HEADER, leader);
        }
        return r;
    }

    /** Header of a directory follower's answer naming the leader's HTTP address ({@code host:port}). */
    public static final String LEADER_HEADER = "X-Hayloft-Leader";

    public static FullHttpResponse text(HttpResponseStatus status, String text, String contentType) {
        return bytes(status, Unpooled.copiedBuffer(text, StandardCharsets.UTF_8), contentType);
    }

    /** A response that takes ownership of {@code content}. */
    public static FullHttpResponse bytes(HttpResponseStatus status, ByteBuf content, String contentType) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        return r;
    }

    public static FullHttpResponse empty(HttpResponseStatus status) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        return r;
    }

    /** Marks the response as the last on its connection. */
    public static FullHttpResponse closing(FullHttpResponse r) {
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return r;
    }
}
