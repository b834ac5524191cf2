package io.hayloft.serverkit.http;

import java.io.IOException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.CommonErrors;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * {@link Router} on its own: templates, literal-before-parameter precedence, typed parameters at
 * their bounds, empty segments and trailing slashes (lenient and strict), percent-encoded and
 * unicode segments, query strings, 404 vs 405 with {@code Allow}, HEAD only where declared, the
 * observer's route names, streamed routes and asynchronous routes.
 */
class RouterTest {
    private static final ApiError BAD = new ApiError(106, "BAD_ARGUMENT", 400);

    private final List<String> observed = new ArrayList<>();

    /** A store-like table whose handlers echo what they parsed. */
    private Router store(boolean strict) {
        Router.Builder b = Router.builder(BAD)
                .route("needle", "GET HEAD PUT DELETE /{volume:digits}/{key}/{alt}", (req, p) -> text(
                        p.number("volume") + " " + Long.toUnsignedString(p.unsigned64("key")) + " "
                                + Integer.toUnsignedString(p.unsigned32("alt")) + " cookie=" + p.query("cookie")))
                .route("batch", "POST /{volume:digits}/batch", (req, p) -> text("batch " + p.number("volume")))
                .route("key", "GET HEAD DELETE /{volume:digits}/{key}", (req, p) -> text("key " + p.unsigned64("key")))
                .route("admin.volume", "GET POST DELETE /admin/volumes/{volume}", (req, p) -> text("admin " + p.number("volume")))
                .route("dir.volume", "GET /v1/volumes/{id}", (req, p) -> text("id " + p.int32("id")))
                .route("store", "POST /v1/stores/{store}/fail", (req, p) -> text("store " + p.string("store")))
                .route("health", "GET /health", (req, p) -> text("ok"))
                .streamed("block.put", "PUT /blocks/{name}", (head, p) -> null)
                .route("block", "GET DELETE /blocks/{name}", (req, p) -> text("block " + p.string("name")))
                .observe((route, m, status, nanos) -> observed.add((route == null ? "-" : route.name()) + " " + m + " " + status));
        if (strict) {
            b.strictSlashes();
        }
        return b.build();
    }

    @Test
    void templatesMatchWithLiteralsBeforeParameters() throws Exception {
        Router r = store(false);
        assertThat(body(r, "GET", "/3/17/0?cookie=ab")).isEqualTo("3 17 0 cookie=ab");
        assertThat(body(r, "POST", "/3/batch")).isEqualTo("batch 3");
        assertThat(body(r, "GET", "/3/17")).isEqualTo("key 17");
        assertThat(body(r, "GET", "/admin/volumes/9")).isEqualTo("admin 9");
        assertThat(body(r, "GET", "/health")).isEqualTo("ok");
        // a volume is digits only: /admin/x/y is no needle, it is no path at all
        assertError(r, "GET", "/admin/x/y", 404, CommonErrors.NOT_FOUND);
        assertError(r, "GET", "/nope", 404, CommonErrors.NOT_FOUND);
        assertError(r, "GET", "/", 404, CommonErrors.NOT_FOUND);
        assertError(r, "GET", "", 404, CommonErrors.NOT_FOUND);
        assertError(r, "GET", "/health/x", 404, CommonErrors.NOT_FOUND);
        assertThat(r.routes()).extracting(Router.Route::name).containsExactly("needle", "batch", "key", "admin.volume",
                "dir.volume", "store", "health", "block.put", "block");
        assertThat(r.routes().get(0).methods()).containsExactly(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.PUT, HttpMethod.DELETE);
        assertThat(r.routes().get(0).template()).isEqualTo("/{volume:digits}/{key}/{alt}");
    }

    @Test
    void keysAndAlternateKeysOverTheirWholeUnsignedRange() throws Exception {
        Router r = store(false);
        assertThat(body(r, "GET", "/1/0/0")).startsWith("1 0 0 ");
        assertThat(body(r, "GET", "/1/18446744073709551615/4294967295")).startsWith("1 18446744073709551615 4294967295 ");
        assertThat(body(r, "GET", "/9223372036854775807/9223372036854775808/2147483648"))
                .startsWith("9223372036854775807 9223372036854775808 2147483648 ");
        assertThat(body(r, "GET", "/1/00000000000000000001/0000000001")).startsWith("1 1 1 ");
        assertBad(r, "/1/18446744073709551616/0", "key must be an unsigned 64-bit number, got '18446744073709551616'");
        assertBad(r, "/1/184467440737095516150/0", "key must be an unsigned decimal number");
        assertBad(r, "/1/-1/0", "key must be an unsigned decimal number, got '-1'");
        assertBad(r, "/1/+1/0", "key must be an unsigned decimal number, got '+1'");
        assertBad(r, "/1/1/4294967296", "alt must be an unsigned 32-bit number, got '4294967296'");
        assertBad(r, "/1/1/99999999999999999999", "alt must be an unsigned 32-bit number");
        assertBad(r, "/1/1/-1", "alt must be an unsigned decimal number, got '-1'");
        assertBad(r, "/1/1/0x1", "alt must be an unsigned decimal number, got '0x1'");
        assertBad(r, "/9223372036854775808/1/0", "volume must be at most 9223372036854775807, got '9223372036854775808'");
        assertBad(r, "/99999999999999999999/1/0", "volume must be a non-negative decimal number");
        assertBad(r, "/admin/volumes/-1", "volume must be a non-negative decimal number, got '-1'");
        assertBad(r, "/admin/volumes/x", "volume must be a non-negative decimal number, got 'x'");
    }

    @Test
    void signedIntegersAndStrings() throws Exception {
        Router r = store(false);
        assertThat(body(r, "GET", "/v1/volumes/2147483647")).isEqualTo("id 2147483647");
        assertThat(body(r, "GET", "/v1/volumes/-2147483648")).isEqualTo("id -2147483648");
        assertBad(r, "/v1/volumes/2147483648", "id must be a 32-bit integer, got '2147483648'");
        assertBad(r, "/v1/volumes/1.5", "id must be a 32-bit integer, got '1.5'");
        assertThat(body(r, "POST", "/v1/stores/store-0/fail")).isEqualTo("store store-0");
    }

    @Test
    void percentEncodedUnicodeAndQueryStrings() throws Exception {
        Router r = store(false);
        assertThat(body(r, "GET", "/%31/%31%37/0")).startsWith("1 17 0 ");
        assertThat(body(r, "GET", "/blocks/caf%C3%A9")).isEqualTo("block café");
        assertThat(body(r, "GET", "/blocks/café")).isEqualTo("block café");
        assertThat(body(r, "GET", "/blocks/a%20b")).isEqualTo("block a b");
        assertThat(body(r, "GET", "/blocks/a+b")).as("+ is a plus in a path").isEqualTo("block a+b");
        // an encoded slash is a slash: two segments, no such route
        assertError(r, "GET", "/blocks/a%2Fb", 404, CommonErrors.NOT_FOUND);
        assertThat(body(r, "GET", "/3/17/0?cookie=ab&cookie=cd&x=%2F")).isEqualTo("3 17 0 cookie=ab");
        assertThat(body(r, "GET", "/3/17/0?")).isEqualTo("3 17 0 cookie=null");
        assertThat(body(r, "GET", "/3/17/0#frag")).isEqualTo("3 17 0 cookie=null");
        assertThat(body(r, "GET", "/health?x=/1/2/3")).isEqualTo("ok");
        assertBad(r, "/1/%E2%82%AC/0", "key must be an unsigned decimal number, got '€'");
        assertBad(r, "/1/１/0", "key must be an unsigned decimal number, got '１'"); // a full-width digit is no digit
    }

    @Test
    void emptySegmentsAndTrailingSlashes() throws Exception {
        Router lenient = store(false);
        assertThat(body(lenient, "GET", "//3//17/0/")).startsWith("3 17 0 ");
        assertThat(body(lenient, "GET", "/health/")).isEqualTo("ok");
        assertThat(body(lenient, "GET", "health")).isEqualTo("ok");
        Router strict = store(true);
        assertThat(body(strict, "GET", "/3/17/0")).startsWith("3 17 0 ");
        assertThat(body(strict, "GET", "/health")).isEqualTo("ok");
        for (String path : List.of("/health/", "//health", "/3//17/0", "/3/17/0/", "/", "//")) {
            assertError(strict, "GET", path, 404, CommonErrors.NOT_FOUND);
        }
    }

    @Test
    void notFoundAndMethodNotAllowedWithAllow() throws Exception {
        Router r = store(false);
        FullHttpResponse post = r.handle(request("POST", "/3/17/0"));
        assertThat(post.status().code()).isEqualTo(405);
        assertThat(post.headers().get(HttpHeaderNames.ALLOW)).isEqualTo("GET, HEAD, PUT, DELETE");
        assertThat(error(post).path("code").asInt()).isEqualTo(CommonErrors.METHOD_NOT_ALLOWED.code());
        assertThat(error(post).path("message").asText()).isEqualTo("method POST not allowed on /3/17/0; use GET, HEAD, PUT or DELETE");
        post.release();
        FullHttpResponse batch = r.handle(request("GET", "/3/batch"));
        assertThat(batch.status().code()).as("a literal's route decides, not the parameter's").isEqualTo(405);
        assertThat(batch.headers().get(HttpHeaderNames.ALLOW)).isEqualTo("POST");
        assertThat(error(batch).path("message").asText()).endsWith("use POST");
        batch.release();
        FullHttpResponse head = r.handle(request("HEAD", "/health"));
        assertThat(head.status().code()).as("HEAD only where a route lists it").isEqualTo(405);
        assertThat(head.headers().get(HttpHeaderNames.ALLOW)).isEqualTo("GET");
        head.release();
        assertThat(r.handle(request("HEAD", "/3/17/0")).status().code()).isEqualTo(200);
        // a streamed and an aggregated route on one path share one Allow
        FullHttpResponse block = r.handle(request("POST", "/blocks/x"));
        assertThat(block.headers().get(HttpHeaderNames.ALLOW)).isEqualTo("PUT, GET, DELETE");
        block.release();
        assertError(r, "PATCH", "/nope", 404, CommonErrors.NOT_FOUND);
        assertThat(observed).containsExactly("- POST 405", "- GET 405", "- HEAD 405", "needle HEAD 200", "- POST 405", "- PATCH 404");
    }

    @Test
    void aServersExceptionsAreTranslatedAndUnmatchedPathsCanBeItsOwn() throws Exception {
        ApiError mine = new ApiError(300, "BAD_CACHE_URL", 400);
        Router r = Router.builder(mine).strictSlashes()
                .route("fails", "GET /fails", (req, p) -> {
                    throw new IllegalStateException("volume gone");
                })
                .route("io", "GET /io", (req, p) -> {
                    throw new IOException("disk");
                })
                .translate(e -> e instanceof IllegalStateException ? CommonErrors.FORBIDDEN.exception(e.getMessage()) : null)
                .unmatched(req -> {
                    throw mine.exception("not a cache URL");
                })
                .build();
        assertError(r, "GET", "/fails", 403, CommonErrors.FORBIDDEN);
        assertError(r, "GET", "/a/b", 400, mine);
        assertThatThrownBy(() -> r.handle(request("GET", "/io"))).isInstanceOf(IOException.class);
        assertThat(r).isNotInstanceOf(StreamedRequestHandler.class);
    }

    @Test
    void streamedRoutesAreChosenByMethodAndPath() throws Exception {
        List<String> opened = new ArrayList<>();
        Router r = Router.builder(BAD)
                .streamed("block.put", "PUT /blocks/{name}", (head, p) -> {
                    opened.add(p.string("name") + " " + p.route().name());
                    return null;
                })
                .route("block", "GET /blocks/{name}", (req, p) -> text("get"))
                .build();
        StreamedRequestHandler s = (StreamedRequestHandler) r;
        assertThat(s.streamsBody(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/blocks/b1?x=1"))).isTrue();
        assertThat(s.streamsBody(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/blocks/b1"))).isFalse();
        assertThat(s.streamsBody(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/blocks"))).isFalse();
        assertThat(s.streamsBody(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/blocks/a/b"))).isFalse();
        s.openBody(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/blocks/b%31"));
        assertThat(opened).containsExactly("b1 block.put");
    }

    @Test
    void asyncRoutesAnswerWhenTheirFutureCompletesWithTheRoutersErrorMapping() throws Exception {
        List<CompletableFuture<FullHttpResponse>> futures = new ArrayList<>();
        Router r = Router.builder(BAD)
                .routeAsync("commit", "POST /v1/volumes/{volume}", (req, p) -> {
                    p.int32("volume"); // a bad parameter is refused before any future
                    CompletableFuture<FullHttpResponse> f = new CompletableFuture<>();
                    futures.add(f);
                    return f;
                })
                .routeAsync("done", "GET /done", (req, p) -> CompletableFuture.completedFuture(text("done")))
                .route("sync", "GET /sync", (req, p) -> text("sync"))
                .translate(e -> e instanceof IllegalArgumentException ? CommonErrors.FORBIDDEN.exception(e.getMessage()) : null)
                .observe((route, m, status, nanos) -> observed.add((route == null ? "-" : route.name()) + " " + m + " " + status))
                .build();
        assertThat(r.routes()).extracting(Router.Route::async).containsExactly(true, true, false);

        CompletableFuture<FullHttpResponse> answer = r.handleAsync(request("POST", "/v1/volumes/7"));
        assertThat(answer).isNotDone();
        assertThat(observed).as("told when the answer is in, not before").isEmpty();
        futures.get(0).complete(text("committed"));
        assertThat(bodyOf(answer.getNow(null))).isEqualTo("committed");

        CompletableFuture<FullHttpResponse> notFound = r.handleAsync(request("POST", "/v1/volumes/8"));
        futures.get(1).completeExceptionally(new CompletionException(CommonErrors.NOT_FOUND.exception("no volume 8")));
        assertErrorAnswer(notFound.getNow(null), 404, CommonErrors.NOT_FOUND);
        CompletableFuture<FullHttpResponse> translated = r.handleAsync(request("POST", "/v1/volumes/9"));
        futures.get(2).completeExceptionally(new ExecutionException(new IllegalArgumentException("fenced")));
        assertErrorAnswer(translated.getNow(null), 403, CommonErrors.FORBIDDEN);
        CompletableFuture<FullHttpResponse> failed = r.handleAsync(request("POST", "/v1/volumes/10"));
        futures.get(3).completeExceptionally(new CompletionException(new IOException("disk")));
        assertThat(failed).isCompletedExceptionally();
        assertThatThrownBy(failed::join).hasCauseInstanceOf(IOException.class);

        // the router's own errors and the other routes' answers are done at once
        assertErrorAnswer(r.handleAsync(request("POST", "/v1/volumes/x")).getNow(null), 400, BAD);
        assertErrorAnswer(r.handleAsync(request("GET", "/v1/volumes/7")).getNow(null), 405, CommonErrors.METHOD_NOT_ALLOWED);
        assertErrorAnswer(r.handleAsync(request("GET", "/nope")).getNow(null), 404, CommonErrors.NOT_FOUND);
        assertThat(bodyOf(r.handleAsync(request("GET", "/sync")).getNow(null))).isEqualTo("sync");
        assertThat(futures).hasSize(4);
        // handle waits for an asynchronous route's answer and throws its untranslated failure as it is
        assertThat(body(r, "GET", "/done")).isEqualTo("done");
        assertThat(body(r, "GET", "/sync")).isEqualTo("sync");
        assertThat(observed).containsExactly("commit POST 200", "commit POST 404", "commit POST 403", "commit POST 400",
                "- GET 405", "- GET 404", "sync GET 200", "done GET 200", "sync GET 200");
    }

    @Test
    void handleThrowsAnAsyncRoutesUntranslatedFailureAsItIs() {
        Router r = Router.builder(BAD)
                .routeAsync("io", "GET /io", (req, p) -> CompletableFuture.failedFuture(new IOException("disk")))
                .routeAsync("throws", "GET /throws", (req, p) -> {
                    throw new IOException("at once");
                })
                .build();
        assertThatThrownBy(() -> r.handle(request("GET", "/io"))).isInstanceOf(IOException.class).hasMessage("disk");
        assertThatThrownBy(() -> r.handle(request("GET", "/throws"))).isInstanceOf(IOException.class).hasMessage("at once");
        assertThat(r.handleAsync(request("GET", "/throws"))).isCompletedExceptionally();
    }

    @Test
    void badTablesAreRefusedWhenBuilt() {
        assertThatThrownBy(() -> Router.builder(BAD).route("a", "GET /x", (req, p) -> null).route("a", "GET /y", (req, p) -> null))
                .hasMessageContaining("declared twice");
        assertThatThrownBy(() -> Router.builder(BAD).route("a", "GET /x", (req, p) -> null).route("b", "GET /x", (req, p) -> null))
                .hasMessageContaining("is route a already");
        assertThatThrownBy(() -> Router.builder(BAD).route("a", "/x", (req, p) -> null)).hasMessageContaining("METHOD");
        assertThatThrownBy(() -> Router.builder(BAD).route("a", "GET /{v}/{v}", (req, p) -> null)).hasMessageContaining("bad parameter");
        assertThatThrownBy(() -> Router.builder(BAD).route("a", "GET /{v:digits}", (req, p) -> null).route("b", "GET /{w}/x", (req, p) -> null))
                .hasMessageContaining("constrained");
    }

    private static FullHttpResponse text(String s) {
        return HttpResponses.text(HttpResponseStatus.OK, s, "text/plain");
    }

    private static FullHttpRequest request(String method, String uri) {
        return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(method), uri, Unpooled.EMPTY_BUFFER);
    }

    private static String body(Router r, String method, String uri) throws Exception {
        FullHttpResponse resp = r.handle(request(method, uri));
        try {
            assertThat(resp.status().code()).as(method + " " + uri + ": " + resp.content().toString(StandardCharsets.UTF_8))
                    .isEqualTo(200);
            return resp.content().toString(StandardCharsets.UTF_8);
        } finally {
            resp.release();
        }
    }

    private static String bodyOf(FullHttpResponse resp) {
        try {
            assertThat(resp.status().code()).isEqualTo(200);
            return resp.content().toString(StandardCharsets.UTF_8);
        } finally {
            resp.release();
        }
    }

    private static void assertErrorAnswer(FullHttpResponse resp, int status, ApiError code) throws Exception {
        try {
            assertThat(resp.status().code()).isEqualTo(status);
            assertThat(error(resp).path("name").asText()).isEqualTo(code.name());
        } finally {
            resp.release();
        }
    }

    private static JsonNode error(FullHttpResponse r) throws Exception {
        return HttpResponses.JSON.readTree(r.content().toString(StandardCharsets.UTF_8)).path("error");
    }

    private static void assertError(Router r, String method, String uri, int status, ApiError code) throws Exception {
        FullHttpResponse resp = r.handle(request(method, uri));
        try {
            assertThat(resp.status().code()).as(method + " " + uri).isEqualTo(status);
            assertThat(resp.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/json");
            assertThat(error(resp).path("code").asInt()).as(method + " " + uri).isEqualTo(code.code());
            assertThat(error(resp).path("name").asText()).isEqualTo(code.name());
        } finally {
            resp.release();
        }
    }

    private static void assertBad(Router r, String uri, String message) throws Exception {
        FullHttpResponse resp = r.handle(request("GET", uri));
        try {
            assertThat(resp.status().code()).as(uri).isEqualTo(400);
            assertThat(error(resp).path("code").asInt()).as(uri).isEqualTo(BAD.code());
            assertThat(error(resp).path("message").asText()).as(uri).contains(message);
        } finally {
            resp.release();
        }
    }
}
