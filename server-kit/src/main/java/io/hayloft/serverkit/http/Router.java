package io.hayloft.serverkit.http;

import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The HTTP routing of a server: routes of a method set plus a path template ({@code GET HEAD
 * /{volume:digits}/{key}/{alt}}), each with a name, matched against the decoded path of a request.
 * A template is literal segments and {@code {name}} parameters; {@code {name:digits}} matches only a
 * segment of ASCII digits (so that {@code /admin/...} is never taken for a volume number). Literal
 * segments are tried before a parameter at the same place. Parameters are parsed and checked by
 * {@link RouteParams}'s typed accessors: a malformed one is the router's {@code badParameter} error,
 * naming the parameter.
 *
 * <p>A path that no route matches is {@code 404 NOT_FOUND} (or the server's {@link Builder#unmatched}
 * handler); a path a route matches with another method is {@code 405 METHOD_NOT_ALLOWED} with an
 * {@code Allow} header listing the route's methods; both in the servers' JSON error shape
 * ({@link HttpResponses#error}). {@code HEAD} is served only where a route lists it. Empty segments
 * ({@code //}, a trailing {@code /}) are skipped, or, with {@link Builder#strictSlashes}, match nothing.
 * Each answered request is reported to the router's {@link Observer} with its route (null when none
 * matched), for the servers' request timers. A route may take its body as a stream
 * ({@link Builder#streamed}); a router with such a route is a {@link StreamedRequestHandler}.
 *
 * <p>A route may answer asynchronously ({@link Builder#routeAsync}): its code returns a future (a
 * change waiting on a consensus round) and the server's executor thread is free meanwhile, as
 * {@link RequestHandler#handleAsync} describes. {@link #handleAsync} gives every other route's
 * answer, and the router's own errors (404, 405, a bad parameter), as a completed future. A failed
 * future is treated as an exception thrown by a synchronous route: an
 * {@link io.hayloft.format.errors.ApiException} (unwrapped from {@code CompletionException} and
 * {@code ExecutionException}), or what the {@link Translator} makes of it, is answered with its JSON
 * error; anything else fails the router's future as is. The {@link Observer} is told when the answer
 * is in, so its time includes the wait. {@link #handle} waits for an asynchronous route's answer on
 * the calling thread: a server that wraps a router must forward {@link #handleAsync} to it too.
 *
 * <p>Matching walks a tree of segments over the path string: no regular expression, no split, no
 * allocation but the {@link RouteParams} of a match (the path is decoded only when it holds a
 * {@code %}). Immutable once built and thread-safe.
 */
public class Router implements RequestHandler {

    /** A route's code: one aggregated request with its path parameters. */
    @FunctionalInterface
    public interface Handler {
        FullHttpResponse handle(FullHttpRequest request, RouteParams params) throws Exception;
    }

    /**
     * An asynchronous route's code: starts the work for one aggregated request and returns its answer
     * as a future, without waiting for it (see {@link RequestHandler#handleAsync} for the contract: the
     * request and {@code params} may be read until the future completes; neither may be released).
     * May also throw, as a {@link Handler} does, for what it refuses at once.
     */
    @FunctionalInterface
    public interface AsyncHandler {
        CompletableFuture<FullHttpResponse> handle(FullHttpRequest request, RouteParams params) throws Exception;
    }

    /** A streamed route's code: opens the receiver of a request body (see {@link StreamedRequestHandler#openBody}). */
    @FunctionalInterface
    public interface BodyHandler {
        StreamedRequestHandler.RequestBody open(HttpRequest head, RouteParams params) throws Exception;
    }

    /** Turns a server's own exception into its wire error, or returns null for one it does not know. */
    @FunctionalInterface
    public interface Translator {
        ApiException translate(Exception e);
    }

    /**
     * Told of each answered request: its route (null when none matched), method, status and time
     * taken. Called on the thread that answered (for an asynchronous route, the one that completed its
     * future); must be thread-safe and cheap.
     */
    @FunctionalInterface
    public interface Observer {
        void answered(Route route, HttpMethod method, int status, long nanos);
    }

    /** One route: its name, methods and template, as {@link #routes()} lists them. Immutable. */
    public static final class Route {
        private final String name;
        private final List<HttpMethod> methods;
        private final String template;
        private final String[] paramNames;
        private final Handler handler;
        private final AsyncHandler asyncHandler;
        private final BodyHandler bodyHandler;

        private Route(String name, List<HttpMethod> methods, String template, String[] paramNames, Handler handler,
                      AsyncHandler asyncHandler, BodyHandler bodyHandler) {
            this.name = name;
            this.methods = List.copyOf(methods);
            this.template = template;
            this.paramNames = paramNames;
            this.handler = handler;
            this.asyncHandler = asyncHandler;
            this.bodyHandler = bodyHandler;
        }

        /** The route's name, unique in its router (the {@code route} tag of the request timers). */
        public String name() {
            return name;
        }

        /** The methods it serves, as declared. */
        public List<HttpMethod> methods() {
            return methods;
        }

        /** Its path template as declared, e.g. {@code /{volume:digits}/{key}/{alt}}. */
        public String template() {
            return template;
        }

        String[] paramNames() {
            return paramNames;
        }

        /** Whether its requests' bodies are streamed ({@link Builder#streamed}). */
        public boolean streamed() {
            return bodyHandler != null;
        }

        /** Whether it answers with a future ({@link Builder#routeAsync}). */
        public boolean async() {
            return asyncHandler != null;
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            for (HttpMethod m : methods) {
                b.append(m.name()).append(' ');
            }
            return b.append(template).append(" (").append(name).append(')').toString();
        }
    }

    /** A place in the segment tree; the routes ending here, by method. Built once, then read only. */
    static final class Node {
        String[] literals = new String[0];
        Node[] literalNodes = new Node[0];
        Node param;
        boolean paramDigits;
        final List<HttpMethod> methods = new ArrayList<>();
        final List<Route> routes = new ArrayList<>();
        String allow; // the Allow header of this path, once it has routes

        Node literal(String s) {
            for (int i = 0; i < literals.length; i++) {
                if (literals[i].equals(s)) {
                    return literalNodes[i];
                }
            }
            literals = Arrays.copyOf(literals, literals.length + 1);
            literalNodes = Arrays.copyOf(literalNodes, literalNodes.length + 1);
            literals[literals.length - 1] = s;
            return literalNodes[literalNodes.length - 1] = new Node();
        }

        Route route(HttpMethod m) {
            for (int i = 0; i < methods.size(); i++) {
                if (methods.get(i).equals(m)) {
                    return routes.get(i);
                }
            }
            return null;
        }
    }

    private final Node root;
    private final List<Route> routes;
    private final ApiError badParameter;
    private final boolean strict;
    private final RequestHandler unmatched;
    private final Translator translator;
    private final Observer observer;

    Router(Builder b) {
        this.root = b.root;
        this.routes = Collections.unmodifiableList(new ArrayList<>(b.routes));
        this.badParameter = b.badParameter;
        this.strict = b.strict;
        this.unmatched = b.unmatched;
        this.translator = b.translator;
        this.observer = b.observer;
    }

    /** A builder whose routes answer a malformed path parameter with {@code badParameter} (400). */
    public static Builder builder(ApiError badParameter) {
        return new Builder(badParameter);
    }

    /** Every route, in the order declared. */
    public List<Route> routes() {
        return routes;
    }

    /**
     * The route that takes {@code method} on {@code uri}, or null (no route's path, or not with that
     * method), without running it; for a fast path that answers some routes' requests itself.
     */
    public Route route(HttpMethod method, String uri) {
        RouteParams p = match(uri);
        return p == null ? null : p.node.route(method);
    }

    /**
     * The answer to {@code request}, on this thread: as {@link #handleAsync}, waiting for an
     * asynchronous route's future. What a route throws, when neither an
     * {@link io.hayloft.format.errors.ApiException} nor translated, is thrown as it is.
     */
    @Override
    public FullHttpResponse handle(FullHttpRequest request) throws Exception {
        CompletableFuture<FullHttpResponse> answer = handleAsync(request);
        try {
            return answer.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause(); // what failed the router's future: the route's own exception
            if (cause instanceof Exception x) {
                throw x;
            }
            if (cause instanceof Error x) {
                throw x;
            }
            throw e;
        }
    }

    /**
     * The answer to {@code request} as a future: already done, except for an asynchronous route's,
     * which completes (with the router's error mapping applied) when the route's future does. The
     * routing itself (404, 405, a bad parameter) happens on this thread. Fails with what a route threw
     * or failed with when it is neither an {@link io.hayloft.format.errors.ApiException} nor translated;
     * an {@link Error} a synchronous route throws is thrown.
     */
    @Override
    public CompletableFuture<FullHttpResponse> handleAsync(FullHttpRequest request) {
        long t0 = System.nanoTime();
        HttpMethod method = request.method();
        Route route = null;
        try {
            try {
                RouteParams params = match(request.uri());
                if (params == null) {
                    if (unmatched == null) {
                        throw notFound(request.uri());
                    }
                    return settled(null, method, unmatched.handleAsync(request), t0);
                }
                route = params.node.route(method);
                if (route == null) {
                    return CompletableFuture.completedFuture(answered(null, method, methodNotAllowed(params, method), t0));
                }
                if (route.bodyHandler != null) { // HttpServer aggregates only what streamsBody refused
                    throw CommonErrors.BAD_REQUEST.exception("the body of " + method.name() + " " + params.path()
                            + " is taken only as a stream");
                }
                params.route = route;
                if (route.asyncHandler != null) {
                    CompletableFuture<FullHttpResponse> answer = Objects.requireNonNull(route.asyncHandler.handle(request, params),
                            "an asynchronous route returned no future");
                    return settled(route, method, answer, t0);
                }
                return CompletableFuture.completedFuture(answered(route, method, route.handler.handle(request, params), t0));
            } catch (ApiException e) {
                throw e;
            } catch (Exception e) {
                throw translated(e);
            }
        } catch (ApiException e) {
            return CompletableFuture.completedFuture(answered(route, method, HttpResponses.error(e), t0));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** {@code e} as the wire error the translator makes of it, or {@code e} thrown when it makes none. */
    private ApiException translated(Exception e) throws Exception {
        ApiException t = translator == null ? null : translator.translate(e);
        if (t == null) {
            throw e;
        }
        return t;
    }

    /**
     * The router's answer once {@code answer} (an asynchronous route's, or the unmatched handler's)
     * completes, on the thread that completes it: its response, or its failure (unwrapped) as an
     * error response when it is a wire error or translates to one, reported to the observer; any
     * other failure as it is.
     */
    private CompletableFuture<FullHttpResponse> settled(Route route, HttpMethod method,
                                                        CompletableFuture<FullHttpResponse> answer, long t0) {
        CompletableFuture<FullHttpResponse> settled = new CompletableFuture<>();
        answer.whenComplete((response, failure) -> {
            try {
                if (failure == null) {
                    String what = route == null ? "the unmatched handler" : "route " + route.name;
                    settled.complete(answered(route, method, Objects.requireNonNull(response, what + " answered null"), t0));
                    return;
                }
                Throwable cause = RequestErrors.unwrap(failure);
                ApiException api = cause instanceof ApiException a ? a
                        : cause instanceof Exception x && translator != null ? translator.translate(x) : null;
                if (api == null) {
                    settled.completeExceptionally(cause);
                } else {
                    settled.complete(answered(route, method, HttpResponses.error(api), t0));
                }
            } catch (Throwable e) { // an observer or translator that threw
                settled.completeExceptionally(e);
            }
        });
        return settled;
    }

    private FullHttpResponse answered(Route route, HttpMethod method, FullHttpResponse r, long t0) {
        if (observer != null) {
            observer.answered(route, method, r.status().code(), System.nanoTime() - t0);
        }
        return r;
    }

    /** The 405 of a path whose routes do not serve {@code method}, with {@code Allow}. */
    private static FullHttpResponse methodNotAllowed(RouteParams params, HttpMethod method) {
        Node n = params.node;
        FullHttpResponse r = HttpResponses.error(CommonErrors.METHOD_NOT_ALLOWED, "method " + method.name()
                + " not allowed on " + params.path() + "; use " + orList(n.methods));
        r.headers().set(HttpHeaderNames.ALLOW, n.allow);
        return r;
    }

    private static ApiException notFound(String uri) {
        String path = uri;
        int end = pathEnd(uri);
        if (end < uri.length()) {
            path = uri.substring(0, end);
        }
        if (path.length() > 200) {
            path = path.substring(0, 200) + "...";
        }
        return CommonErrors.NOT_FOUND.exception("no such endpoint: " + path);
    }

    static String orList(List<HttpMethod> methods) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < methods.size(); i++) {
            if (i > 0) {
                b.append(i == methods.size() - 1 ? " or " : ", ");
            }
            b.append(methods.get(i).name());
        }
        return b.toString();
    }

    /**
     * The route match of {@code uri}: the node of the path with its parameters, or null when no
     * route's template matches the path (any method).
     */
    RouteParams match(String uri) {
        int end = pathEnd(uri);
        String path;
        if (uri.indexOf('%') >= 0 && uri.indexOf('%') < end) {
            path = new QueryStringDecoder(uri).path(); // HttpServer refused bad escapes
            end = path.length();
        } else {
            path = uri;
        }
        int[] bounds = new int[8];
        Node n = walk(root, path, 0, end, bounds, 0);
        return n == null ? null : new RouteParams(this, uri, path, end, n, bounds);
    }

    private static int pathEnd(String uri) {
        for (int i = 0; i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c == '?' || c == '#') {
                return i;
            }
        }
        return uri.length();
    }

    /** Matches path[pos, end) below {@code n}; parameter bounds go to bounds[2 * i], bounds[2 * i + 1]. */
    private Node walk(Node n, String path, int pos, int end, int[] bounds, int param) {
        if (strict) {
            if (pos < end && path.charAt(pos) == '/') {
                pos++;
                if (pos == end || path.charAt(pos) == '/') {
                    return null; // an empty segment
                }
            }
        } else {
            while (pos < end && path.charAt(pos) == '/') {
                pos++;
            }
        }
        if (pos >= end) {
            return n.routes.isEmpty() ? null : n;
        }
        int segEnd = path.indexOf('/', pos);
        if (segEnd < 0 || segEnd > end) {
            segEnd = end;
        }
        int len = segEnd - pos;
        String[] lits = n.literals;
        for (int i = 0; i < lits.length; i++) {
            if (lits[i].length() == len && path.regionMatches(pos, lits[i], 0, len)) {
                Node found = walk(n.literalNodes[i], path, segEnd, end, bounds, param);
                if (found != null) {
                    return found;
                }
            }
        }
        Node p = n.param;
        if (p != null && (!n.paramDigits || digits(path, pos, segEnd))) {
            if (bounds.length < 2 * param + 2) {
                return null; // more parameters than any template has
            }
            bounds[2 * param] = pos;
            bounds[2 * param + 1] = segEnd;
            return walk(p, path, segEnd, end, bounds, param + 1);
        }
        return null;
    }

    private static boolean digits(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    ApiError badParameter() {
        return badParameter;
    }

    /** A router with streamed routes: the server streams the bodies those routes take. */
    private static final class Streaming extends Router implements StreamedRequestHandler {
        private final HttpMethod[] streamedMethods; // the methods of the streamed routes: others are never matched here

        Streaming(Builder b) {
            super(b);
            this.streamedMethods = b.routes.stream().filter(Route::streamed).flatMap(r -> r.methods().stream()).distinct()
                    .toArray(HttpMethod[]::new);
        }

        /** On the event loop, for every request head: a request of another method is aggregated without a match. */
        @Override
        public boolean streamsBody(HttpRequest head) {
            boolean candidate = false;
            for (HttpMethod m : streamedMethods) {
                candidate |= m.equals(head.method());
            }
            if (!candidate) {
                return false;
            }
            RouteParams p = match(head.uri());
            Route r = p == null ? null : p.node.route(head.method());
            return r != null && r.bodyHandler != null;
        }

        @Override
        public RequestBody openBody(HttpRequest head) throws Exception {
            long t0 = System.nanoTime();
            RouteParams p = match(head.uri());
            Route route = Objects.requireNonNull(p.node.route(head.method()), "streamsBody chose this head");
            p.route = route;
            RequestBody body;
            try {
                body = route.bodyHandler.open(head, p);
            } catch (Exception e) {
                throw failed(route, head.method(), e, t0);
            }
            return new RequestBody() {
                @Override
                public void content(ByteBuf chunk) throws Exception {
                    try {
                        body.content(chunk);
                    } catch (Exception e) {
                        throw failed(route, head.method(), e, t0);
                    }
                }

                @Override
                public FullHttpResponse end(HttpHeaders trailers) throws Exception {
                    FullHttpResponse r;
                    try {
                        r = body.end(trailers);
                    } catch (Exception e) {
                        throw failed(route, head.method(), e, t0);
                    }
                    return answeredStream(route, head.method(), r, t0);
                }

                @Override
                public void abort() {
                    body.abort();
                }
            };
        }

        private FullHttpResponse answeredStream(Route route, HttpMethod m, FullHttpResponse r, long t0) {
            return super.answered(route, m, r, t0);
        }

        /** A failure of a streamed request: translated, reported to the observer when it is a wire error. */
        private Exception failed(Route route, HttpMethod m, Exception e, long t0) {
            ApiException api = e instanceof ApiException a ? a : super.translator == null ? null : super.translator.translate(e);
            if (api == null) {
                return e;
            }
            if (super.observer != null) {
                super.observer.answered(route, m, api.error().status(), System.nanoTime() - t0);
            }
            return api;
        }
    }

    /** Declares the routes of a {@link Router}. Not thread-safe; used once. */
    public static final class Builder {
        private final ApiError badParameter;
        private final Node root = new Node();
        private final List<Route> routes = new ArrayList<>();
        private final Set<String> names = new HashSet<>();
        private boolean strict;
        private boolean anyStreamed;
        private RequestHandler unmatched;
        private Translator translator;
        private Observer observer;

        private Builder(ApiError badParameter) {
            this.badParameter = Objects.requireNonNull(badParameter, "badParameter");
        }

        /**
         * Adds route {@code name}: {@code spec} is its methods and template separated by spaces, e.g.
         * {@code "GET HEAD /{volume:digits}/{key}/{alt}"}.
         */
        public Builder route(String name, String spec, Handler handler) {
            return add(name, spec, Objects.requireNonNull(handler, "handler"), null, null);
        }

        /**
         * Adds route {@code name} (spec as for {@link #route}) whose code answers with a future, e.g.
         * {@code routeAsync("volumes.create", "POST /v1/volumes", (req, p) -> directory.createVolumesAsync(...))}:
         * the server's executor thread is free while the future is pending (see {@link AsyncHandler}).
         */
        public Builder routeAsync(String name, String spec, AsyncHandler handler) {
            return add(name, spec, null, Objects.requireNonNull(handler, "handler"), null);
        }

        /** Adds a route whose request bodies are streamed to {@code handler} instead of aggregated. */
        public Builder streamed(String name, String spec, BodyHandler handler) {
            anyStreamed = true;
            return add(name, spec, null, null, Objects.requireNonNull(handler, "handler"));
        }

        /** Empty segments ({@code //}, a trailing {@code /}) match nothing, instead of being skipped. */
        public Builder strictSlashes() {
            strict = true;
            return this;
        }

        /** Answers the paths no route matches, instead of 404 NOT_FOUND (a cache, whose every path is a cache URL). */
        public Builder unmatched(RequestHandler handler) {
            unmatched = handler;
            return this;
        }

        /** Turns the server's own exceptions into wire errors. */
        public Builder translate(Translator t) {
            translator = t;
            return this;
        }

        /** Told of every answered request (the request timers). */
        public Builder observe(Observer o) {
            observer = o;
            return this;
        }

        public Router build() {
            return anyStreamed ? new Streaming(this) : new Router(this);
        }

        private Builder add(String name, String spec, Handler handler, AsyncHandler asyncHandler, BodyHandler bodyHandler) {
            if (!names.add(Objects.requireNonNull(name, "name"))) {
                throw new IllegalArgumentException("route name " + name + " declared twice");
            }
            String[] words = spec.trim().split(" +");
            String template = words[words.length - 1];
            if (words.length < 2 || !template.startsWith("/")) {
                throw new IllegalArgumentException("route " + name + ": spec must be 'METHOD... /template', got '" + spec + "'");
            }
            List<HttpMethod> methods = new ArrayList<>();
            for (int i = 0; i < words.length - 1; i++) {
                methods.add(HttpMethod.valueOf(words[i]));
            }
            Node n = root;
            List<String> params = new ArrayList<>();
            for (String seg : template.substring(1).split("/")) {
                if (seg.isEmpty()) {
                    continue;
                }
                if (seg.startsWith("{") && seg.endsWith("}")) {
                    String p = seg.substring(1, seg.length() - 1);
                    boolean digits = p.endsWith(":digits");
                    p = digits ? p.substring(0, p.length() - ":digits".length()) : p;
                    if (p.isEmpty() || p.contains(":") || params.contains(p)) {
                        throw new IllegalArgumentException("route " + name + ": bad parameter '" + seg + "'");
                    }
                    if (n.param != null && n.paramDigits != digits) {
                        throw new IllegalArgumentException("route " + name + ": parameter '" + seg
                                + "' constrained otherwise than another route's at the same place");
                    }
                    if (n.param == null) {
                        n.param = new Node();
                        n.paramDigits = digits;
                    }
                    params.add(p);
                    n = n.param;
                } else if (seg.contains("{") || seg.contains("}")) {
                    throw new IllegalArgumentException("route " + name + ": bad segment '" + seg + "'");
                } else {
                    n = n.literal(seg);
                }
            }
            if (params.size() > 4) {
                throw new IllegalArgumentException("route " + name + ": at most 4 parameters");
            }
            Route route = new Route(name, methods, template, params.toArray(new String[0]), handler, asyncHandler,
                    bodyHandler);
            for (HttpMethod m : methods) {
                if (n.route(m) != null) {
                    throw new IllegalArgumentException("route " + name + ": " + m + " " + template + " is route "
                            + n.route(m).name + " already");
                }
                n.methods.add(m);
                n.routes.add(route);
            }
            StringBuilder allow = new StringBuilder();
            for (HttpMethod m : n.methods) {
                allow.append(allow.length() == 0 ? "" : ", ").append(m.name());
            }
            n.allow = allow.toString();
            routes.add(route);
            return this;
        }
    }
}
