package io.hayloft.cli.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.testkit.Await;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs the Debian {@code chromium} binary headless, as a separate process with a deadline (killed,
 * with its children, when it overruns): {@link #dumpDom} and {@link #screenshot} use its one-shot
 * command-line modes; {@link #open} starts it with the DevTools protocol on a loopback port and
 * drives one page over a WebSocket ({@code java.net.http}), for tests that must type into the page.
 *
 * <p>{@link #require()} skips the calling test when {@code chromium} is not on the PATH, unless
 * {@code HAYLOFT_REQUIRE_CHROMIUM=1} is set (CI), which makes it fail instead.
 */
final class HeadlessChromium {

    private static final Duration DEADLINE = Duration.ofSeconds(90);

    private HeadlessChromium() {
    }

    /** The chromium binary; skips (or, with HAYLOFT_REQUIRE_CHROMIUM=1, fails) the test without one. */
    static Path require() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, "chromium");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        if ("1".equals(System.getenv("HAYLOFT_REQUIRE_CHROMIUM"))) {
            throw new AssertionError("HAYLOFT_REQUIRE_CHROMIUM=1 but no chromium on the PATH (apt-get install chromium)");
        }
        Assumptions.abort("no chromium on the PATH: the browser tests of the web console are skipped");
        return null;
    }

    private static List<String> command(Path chromium, Path profile, String... args) {
        List<String> cmd = new ArrayList<>(List.of(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions", "--mute-audio",
                "--user-data-dir=" + profile));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** The DOM of {@code url} after {@code virtualMillis} of virtual time (timers run, fetches complete). */
    static String dumpDom(Path chromium, Path work, String url, int virtualMillis) throws IOException, InterruptedException {
        Path out = work.resolve("dom.html");
        run(command(chromium, work.resolve("profile-dom"), "--virtual-time-budget=" + virtualMillis, "--dump-dom", url), out,
                work.resolve("dom.log"));
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    /** A PNG of {@code url} at {@code width × height} after {@code virtualMillis} of virtual time. */
    static void screenshot(Path chromium, Path work, String url, Path png, int width, int height, int virtualMillis)
            throws IOException, InterruptedException {
        run(command(chromium, work.resolve("profile-png"), "--hide-scrollbars", "--window-size=" + width + "," + height,
                "--virtual-time-budget=" + virtualMillis, "--screenshot=" + png.toAbsolutePath(), url),
                work.resolve("png.out"), work.resolve("png.log"));
        if (!Files.isRegularFile(png) || Files.size(png) == 0) {
            throw new AssertionError("chromium wrote no screenshot; its log:\n" + Files.readString(work.resolve("png.log")));
        }
    }

    private static void run(List<String> cmd, Path out, Path log) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(log.toFile()).start();
        try {
            if (!p.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("chromium did not finish within " + DEADLINE.toSeconds() + " s: " + cmd);
            }
            if (p.exitValue() != 0) {
                throw new AssertionError("chromium exited with " + p.exitValue() + ": " + cmd + "\n" + Files.readString(log));
            }
        } finally {
            kill(p);
        }
    }

    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    /** Starts chromium with DevTools on a free loopback port and attaches to its page. The caller closes it. */
    static Page open(Path chromium, Path work) throws Exception {
        Path profile = work.resolve("profile-cdp");
        Process p = new ProcessBuilder(command(chromium, profile, "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0", "about:blank"))
                .redirectOutput(work.resolve("cdp.out").toFile()).redirectError(work.resolve("cdp.log").toFile()).start();
        try {
            // Chromium writes the port it bound to this file once DevTools listens.
            Path portFile = profile.resolve("DevToolsActivePort");
            Await.until("chromium's DevTools port file", () -> {
                try {
                    return Files.isRegularFile(portFile) && Files.readAllLines(portFile).size() >= 2 || !p.isAlive();
                } catch (IOException e) {
                    return false;
                }
            });
            if (!p.isAlive()) {
                throw new AssertionError("chromium exited: " + Files.readString(work.resolve("cdp.log")));
            }
            int port = Integer.parseInt(Files.readAllLines(portFile).get(0).trim());
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            String targets = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
            String ws = null;
            for (JsonNode t : HttpResponses.JSON.readTree(targets)) {
                if ("page".equals(t.path("type").asText())) {
                    ws = t.get("webSocketDebuggerUrl").asText();
                    break;
                }
            }
            if (ws == null) {
                throw new AssertionError("chromium has no page target: " + targets);
            }
            Page page = new Page(p);
            page.socket = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5)).buildAsync(URI.create(ws), page)
                    .get(10, TimeUnit.SECONDS);
            return page;
        } catch (Exception | AssertionError e) {
            kill(p);
            throw e;
        }
    }

    /** One page of a running chromium, driven over the DevTools protocol. Not thread-safe. */
    static final class Page implements WebSocket.Listener, AutoCloseable {
        private final Process process;
        private final AtomicInteger ids = new AtomicInteger();
        private final Map<Integer, CompletableFuture<JsonNode>> calls = new ConcurrentHashMap<>();
        private final StringBuilder partial = new StringBuilder();
        private WebSocket socket;

        private Page(Process process) {
            this.process = process;
        }

        /** Sends a DevTools command and waits for its result. */
        JsonNode call(String method, Map<String, Object> params) throws Exception {
            int id = ids.incrementAndGet();
            CompletableFuture<JsonNode> f = new CompletableFuture<>();
            calls.put(id, f);
            ObjectNode msg = HttpResponses.JSON.createObjectNode();
            msg.put("id", id);
            msg.put("method", method);
            msg.set("params", HttpResponses.JSON.valueToTree(params));
            socket.sendText(HttpResponses.JSON.writeValueAsString(msg), true).get(10, TimeUnit.SECONDS);
            JsonNode r = f.get(30, TimeUnit.SECONDS);
            if (r.has("error")) {
                throw new AssertionError(method + " failed: " + r.get("error"));
            }
            return r.get("result");
        }

        void navigate(String url) throws Exception {
            call("Page.navigate", Map.of("url", url));
        }

        /** The value of a JavaScript expression in the page (promises awaited). */
        JsonNode eval(String expression) throws Exception {
            JsonNode r = call("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true, "awaitPromise", true));
            if (r.has("exceptionDetails")) {
                throw new AssertionError("page script failed: " + r.get("exceptionDetails"));
            }
            return r.path("result").path("value");
        }

        /** Waits until a boolean expression holds in the page. */
        void await(String what, String expression) throws InterruptedException {
            Await.until(what, () -> {
                try {
                    return eval(expression).asBoolean(false);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return true;
                } catch (Exception | AssertionError e) {
                    return false; // e.g. between two documents while navigating
                }
            });
        }

        String html() throws Exception {
            return eval("document.documentElement.outerHTML").asText();
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                try {
                    JsonNode msg = HttpResponses.JSON.readTree(partial.toString());
                    CompletableFuture<JsonNode> f = msg.has("id") ? calls.remove(msg.get("id").asInt()) : null;
                    if (f != null) {
                        f.complete(msg);
                    }
                } catch (IOException e) {
                    calls.values().forEach(f -> f.completeExceptionally(e));
                }
                partial.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public void close() {
            if (socket != null) {
                socket.abort();
            }
            kill(process);
        }
    }
}
