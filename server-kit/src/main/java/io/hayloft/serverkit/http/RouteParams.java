package io.hayloft.serverkit.http;

import io.hayloft.format.errors.ApiException;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;

/**
 * The path parameters of one request matched by a {@link Router}, with typed accessors that parse
 * and check them in one place: a malformed value is the router's {@code badParameter} error (400)
 * naming the parameter and the value, e.g. {@code key must be an unsigned decimal number, got 'x'}.
 * Numbers are parsed from the path without a substring. The query string is decoded on first use.
 *
 * <p>Not thread-safe: belongs to the request's thread (for an {@linkplain Router.Builder#routeAsync
 * asynchronous route}, to whichever thread carries the request on, one at a time, until its answer completes).
 */
public final class RouteParams {
    private final Router router;
    private final String uri;
    private final String path;
    private final int end;
    final Router.Node node;
    private final int[] bounds;
    Router.Route route;
    private Map<String, List<String>> query;

    RouteParams(Router router, String uri, String path, int end, Router.Node node, int[] bounds) {
        this.router = router;
        this.uri = uri;
        this.path = path;
        this.end = end;
        this.node = node;
        this.bounds = bounds;
    }

    /** The route matched. */
    public Router.Route route() {
        return route;
    }

    /** The request's decoded path, without the query. */
    public String path() {
        return end == path.length() ? path : path.substring(0, end);
    }

    /** Parameter {@code name} as it is in the decoded path (never empty). */
    public String string(String name) {
        int i = index(name);
        return path.substring(bounds[2 * i], bounds[2 * i + 1]);
    }

    /** A non-negative decimal number up to {@link Long#MAX_VALUE} (a store's volume, an offset). */
    public long number(String name) {
        int i = index(name);
        int from = bounds[2 * i];
        int to = bounds[2 * i + 1];
        if (to - from > 19 || !digits(from, to)) {
            throw bad(name + " must be a non-negative decimal number, got '" + string(name) + "'");
        }
        long v = 0;
        for (int k = from; k < to; k++) {
            int d = path.charAt(k) - '0';
            if (v > (Long.MAX_VALUE - d) / 10) {
                throw bad(name + " must be at most " + Long.MAX_VALUE + ", got '" + string(name) + "'");
            }
            v = v * 10 + d;
        }
        return v;
    }

    /** A signed 32-bit decimal integer, as {@link Integer#parseInt} reads it (a directory volume id). */
    public int int32(String name) {
        String s = string(name);
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw bad(name + " must be a 32-bit integer, got '" + s + "'");
        }
    }

    /** An unsigned 64-bit decimal number (a photo key), as a long holding its bits. */
    public long unsigned64(String name) {
        int i = index(name);
        int from = bounds[2 * i];
        int to = bounds[2 * i + 1];
        if (to - from > 20 || !digits(from, to)) {
            throw bad(name + " must be an unsigned decimal number, got '" + string(name) + "'");
        }
        if (to - from < 19) {
            long v = 0;
            for (int k = from; k < to; k++) {
                v = v * 10 + (path.charAt(k) - '0');
            }
            return v;
        }
        try {
            return Long.parseUnsignedLong(string(name));
        } catch (NumberFormatException e) {
            throw bad(name + " must be an unsigned 64-bit number, got '" + string(name) + "'");
        }
    }

    /** An unsigned 32-bit decimal number (an alternate key, 0..2^32-1), as an int holding its bits. */
    public int unsigned32(String name) {
        int i = index(name);
        int from = bounds[2 * i];
        int to = bounds[2 * i + 1];
        if (to - from > 20 || !digits(from, to)) {
            throw bad(name + " must be an unsigned decimal number, got '" + string(name) + "'");
        }
        long v = 0;
        for (int k = from; k < to; k++) {
            v = v * 10 + (path.charAt(k) - '0');
            if (v > 0xFFFFFFFFL) {
                throw bad(name + " must be an unsigned 32-bit number, got '" + string(name) + "'");
            }
        }
        return (int) v;
    }

    /** The first value of query parameter {@code name}, or null when absent. */
    public String query(String name) {
        List<String> v = queryParameters().get(name);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    /** Every query parameter, decoded (on first use). */
    public Map<String, List<String>> queryParameters() {
        if (query == null) {
            query = new QueryStringDecoder(uri).parameters();
        }
        return query;
    }

    private int index(String name) {
        String[] names = route.paramNames();
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("route " + route.name() + " has no parameter '" + name + "'");
    }

    private boolean digits(int from, int to) {
        if (from == to) {
            return false;
        }
        for (int k = from; k < to; k++) {
            char c = path.charAt(k);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private ApiException bad(String message) {
        return router.badParameter().exception(message);
    }
}
