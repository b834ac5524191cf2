package io.hayloft.cli.cluster;

import java.util.Locale;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cache.CacheServer;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidServer;
import io.hayloft.serverkit.http.Router;
import io.hayloft.testkit.Closing;
import io.netty.handler.codec.http.HttpMethod;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every route documented in {@code docs/store-api.md}, {@code docs/directory-api.md},
 * {@code docs/cache-api.md} and {@code docs/raid-api.md} exists in that server's {@link Router} with
 * the documented methods, and no route exists undocumented. The servers are real (an embedded cluster,
 * a cache node, a raid-node); their routers' tables are compared with the docs' endpoint tables.
 *
 * <p>The docs' tables are of two shapes: a {@code | method | path | ...} header, each row a method
 * and a path in backquotes ({@code same}: the row above's path); or a {@code | method and path | ...}
 * header, each row's first cell one or more backquoted {@code METHOD /path}s (a bare {@code /path}
 * takes the method before it). Paths compare with their query ({@code ?...}) and optional parts
 * ({@code [...]}) dropped and every placeholder ({@code <id>}, {@code {id}}, {@code {id:digits}}) as {@code {}}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RouteDocsTest {
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");
    private static final Pattern METHOD_PATH = Pattern.compile("^((?:[A-Z]+ )+)(/\\S*)$");
    private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");

    @TempDir
    static Path dir;

    private EmbeddedCluster cluster;
    private CacheServer cache;
    private RaidServer raid;

    @BeforeAll
    void start() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(1, 1));
        cache = CacheServer.start(BesideTheCluster.cache(cluster.directoryAddress()));
        raid = RaidServer.start(BesideTheCluster.raid(cluster.directoryAddress(), dir), Checkpoints.NONE);
    }

    @AfterAll
    void stop() throws Exception {
        Closing.all(raid, cache, cluster);
    }

    @Test
    void theStoreServesExactlyItsDocumentedRoutes() throws IOException {
        assertSame("store-api.md", cluster.store(0).router());
    }

    @Test
    void theDirectoryServesExactlyItsDocumentedRoutes() throws IOException {
        assertSame("directory-api.md", cluster.directory().router());
    }

    @Test
    void theCacheServesExactlyItsDocumentedRoutes() throws IOException {
        assertSame("cache-api.md", cache.router());
    }

    @Test
    void theRaidNodeServesExactlyItsDocumentedRoutes() throws IOException {
        assertSame("raid-api.md", raid.router());
    }

    @Test
    void theParserReadsBothTableShapes() {
        String doc = String.join("\n",
                "| method | path | body |", "|---|---|---|",
                "| PUT | `/<volume>/<key>/<alt>?cookie=<hex>` | data |", "| GET | same | — |",
                "| GET | `/blocks/<name>[?offset=<o>&length=<n>]` | — |",
                "", "| method and path | what |", "|---|---|",
                "| `POST /admin/run[?waitMillis=N]` (admin) | runs |", "| `GET /ui`, `/ui/{file}` | files |",
                "| `DELETE /v1/raid-lease?holder=H` | x \\| y |",
                "", "| code | name |", "|---|---|", "| `GET /not/a/route` | 1 |");
        assertThat(documented(doc)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "/{}/{}/{}", Set.of("PUT", "GET"), "/blocks/{}", Set.of("GET"), "/admin/run", Set.of("POST"),
                "/ui", Set.of("GET"), "/ui/{}", Set.of("GET"), "/v1/raid-lease", Set.of("DELETE")));
    }

    private static void assertSame(String doc, Router router) throws IOException {
        Map<String, Set<String>> documented = documented(Files.readString(docs().resolve(doc)));
        assertThat(documented).as("routes documented in docs/%s", doc).isNotEmpty();
        Map<String, Set<String>> served = new TreeMap<>();
        for (Router.Route r : router.routes()) {
            for (HttpMethod m : r.methods()) {
                served.computeIfAbsent(normalize(r.template()), k -> new TreeSet<>()).add(m.name());
            }
        }
        List<String> undocumented = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        served.forEach((path, methods) -> methods.stream().filter(m -> !documented.getOrDefault(path, Set.of()).contains(m))
                .forEach(m -> undocumented.add(m + " " + path)));
        documented.forEach((path, methods) -> methods.stream().filter(m -> !served.getOrDefault(path, Set.of()).contains(m))
                .forEach(m -> missing.add(m + " " + path)));
        assertThat(undocumented).as("routes the server has that docs/%s does not list", doc).isEmpty();
        assertThat(missing).as("routes docs/%s lists that the server does not have", doc).isEmpty();
    }

    /** The docs directory of the repository (the tests run in cli/). */
    private static Path docs() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve("docs"))) {
            p = p.getParent();
        }
        assertThat(p).as("a docs/ directory above the working directory").isNotNull();
        return p.resolve("docs");
    }

    /** Normalized path to methods, from every endpoint table of a doc. */
    static Map<String, Set<String>> documented(String markdown) {
        Map<String, Set<String>> out = new TreeMap<>();
        int shape = 0; // 0: not in an endpoint table, 1: | method | path |, 2: | method and path |
        String previousPath = null;
        for (String line : markdown.split("\n")) {
            String t = line.trim();
            if (!t.startsWith("|")) {
                shape = 0;
                continue;
            }
            List<String> cells = cells(t);
            String first = cells.isEmpty() ? "" : cells.get(0).toLowerCase(Locale.ROOT);
            if (first.equals("method") && cells.size() > 1 && cells.get(1).equalsIgnoreCase("path")) {
                shape = 1;
                continue;
            }
            if (first.equals("method and path")) {
                shape = 2;
                continue;
            }
            if (shape == 0 || first.matches(":?-+:?")) {
                continue;
            }
            if (shape == 1) {
                String method = cells.get(0).trim();
                String path;
                if (cells.get(1).trim().equals("same")) {
                    path = previousPath;
                } else {
                    Matcher m = CODE.matcher(cells.get(1));
                    assertThat(m.find()).as("a path in backquotes: %s", line).isTrue();
                    path = m.group(1);
                }
                assertThat(METHODS).as("method of %s", line).contains(method);
                assertThat(path).as("path of %s", line).startsWith("/");
                previousPath = path;
                out.computeIfAbsent(normalize(path), k -> new TreeSet<>()).add(method);
            } else {
                Matcher m = CODE.matcher(cells.get(0));
                List<String> methods = null;
                while (m.find()) {
                    String span = m.group(1).trim();
                    Matcher mp = METHOD_PATH.matcher(span);
                    String path;
                    if (mp.matches()) {
                        methods = List.of(mp.group(1).trim().split(" "));
                        path = mp.group(2);
                    } else {
                        assertThat(span).as("a bare path after a method in %s", line).startsWith("/");
                        assertThat(methods).as("a method before %s", span).isNotNull();
                        path = span;
                    }
                    for (String method : methods) {
                        assertThat(METHODS).as("method of %s", line).contains(method);
                        out.computeIfAbsent(normalize(path), k -> new TreeSet<>()).add(method);
                    }
                }
                assertThat(methods).as("a backquoted METHOD /path in %s", line).isNotNull();
            }
        }
        return out;
    }

    /** The cells of a table row; {@code \|} is no separator. */
    private static List<String> cells(String row) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        for (int i = 1; i < row.length(); i++) {
            char c = row.charAt(i);
            if (c == '\\' && i + 1 < row.length() && row.charAt(i + 1) == '|') {
                cell.append('|');
                i++;
            } else if (c == '|') {
                cells.add(cell.toString().trim());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        return cells;
    }

    /** A path without its query and optional parts, every placeholder as {@code {}}. */
    static String normalize(String path) {
        String p = path.replaceAll("\\[[^\\]]*]", "");
        int q = p.indexOf('?');
        if (q >= 0) {
            p = p.substring(0, q);
        }
        StringBuilder b = new StringBuilder();
        for (String seg : p.split("/")) {
            if (seg.isEmpty()) {
                continue;
            }
            boolean placeholder = (seg.startsWith("<") && seg.endsWith(">")) || (seg.startsWith("{") && seg.endsWith("}"));
            b.append('/').append(placeholder ? "{}" : seg);
        }
        return b.length() == 0 ? "/" : b.toString();
    }
}
