package io.hayloft.directory;

import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The web console's static files (docs/console.md), served under {@code /ui} from this module's
 * resources ({@code io/hayloft/directory/console/}). Only the files named in {@link #FILES} exist;
 * any other path under {@code /ui} is a 404 JSON error, so no request can reach another resource.
 * The files are read once, when the class is loaded. They are served without the admin token: they
 * hold no cluster data (that comes from {@code GET /v1/console}, which needs it).
 *
 * <p>Every answer carries a Content-Security-Policy that allows only this origin's script, style
 * and JSON ({@code connect-src 'self'}), no inline script, and no framing.
 *
 * <p>Immutable, hence thread-safe.
 */
final class ConsoleAssets {

    /** File name under /ui → content type. {@code /ui} and {@code /ui/} are {@code index.html}. */
    static final Map<String, String> FILES = Map.of(
            "index.html", "text/html; charset=utf-8",
            "app.js", "text/javascript; charset=utf-8",
            "style.css", "text/css; charset=utf-8");

    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
            + "form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

    private static final Map<String, byte[]> CONTENT = load();

    private ConsoleAssets() {
    }

    private static Map<String, byte[]> load() {
        Map<String, byte[]> m = new HashMap<>();
        for (String name : FILES.keySet()) {
            try (InputStream in = ConsoleAssets.class.getResourceAsStream("console/" + name)) {
                if (in == null) {
                    throw new IllegalStateException("console resource missing from the jar: console/" + name);
                }
                m.put(name, in.readAllBytes());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return Map.copyOf(m);
    }

    /**
     * The file for the path segments after {@code ui} (empty: the page).
     *
     * @throws io.hayloft.format.errors.ApiException NOT_FOUND for any other path
     */
    static FullHttpResponse get(List<String> rest, String path) {
        String name = rest.isEmpty() ? "index.html" : rest.size() == 1 ? rest.get(0) : null;
        byte[] body = name == null ? null : CONTENT.get(name);
        if (body == null) {
            throw CommonErrors.NOT_FOUND.exception("no such console file: " + path + " (the console is at /ui)");
        }
        FullHttpResponse r = HttpResponses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(body), FILES.get(name));
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        return secure(r);
    }

    /** Adds the console's security headers to a response. */
    static FullHttpResponse secure(FullHttpResponse r) {
        r.headers().set("Content-Security-Policy", CSP);
        r.headers().set("X-Content-Type-Options", "nosniff");
        r.headers().set("X-Frame-Options", "DENY");
        r.headers().set("Referrer-Policy", "no-referrer");
        return r;
    }
}
