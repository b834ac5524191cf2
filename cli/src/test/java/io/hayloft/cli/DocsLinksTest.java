package io.hayloft.cli;

import java.io.UncheckedIOException;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A newcomer's path through the documentation is a tested property: in {@code README.md} and every
 * {@code docs/**.md}, every relative link (outside fenced code) names a file or directory of the
 * repository, every {@code #anchor} names a heading of its target (GitHub's heading ids), every
 * {@code docs/NAME.md} mentioned in the text exists, and nothing refers to a file a clone does not
 * contain (the design notes that once lived beside the repository, absolute paths of a build machine).
 *
 * <p>Stateless; the checks read the files of the working tree.
 */
class DocsLinksTest {
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern CODE_SPAN = Pattern.compile("`[^`\\n]*`");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");
    private static final Pattern DOC_MENTION = Pattern.compile("(?<![\\w/.-])docs/[\\w./-]+\\.md\\b");
    /** Files and places outside the repository that documentation once referred to. */
    private static final Pattern OUTSIDE = Pattern.compile(
            "DESIGN\\.md|ERASURE\\.md|STYLE\\.md|PEERS\\.md|(?<![\\w.-])shared/|(?<![\\w.-])papers/|/work/");

    @Test
    void everyLinkOfTheReadmeAndTheDocsResolvesAndNothingPointsOutsideTheRepository() throws IOException {
        Path root = repositoryRoot();
        List<Path> files = markdownFiles(root);
        assertThat(files).as("README.md and docs/*.md").hasSizeGreaterThan(10)
                .contains(root.resolve("README.md"), root.resolve("docs/architecture.md"));
        assertThat(problems(root, files)).as("broken links and references to files outside the repository").isEmpty();
    }

    @Test
    void theCheckFindsABrokenLinkAMissingAnchorAndAnOutsideReference(@TempDir Path root) throws IOException {
        Files.createDirectories(root.resolve("docs"));
        Files.writeString(root.resolve("README.md"), String.join("\n",
                "# Title", "", "See [the guide](docs/guide.md#second-part-v2) and [gone](docs/gone.md).",
                "[up](../outside.md) and [bad anchor](docs/guide.md#nowhere); design in DESIGN.md.",
                "```", "[in code](docs/not-checked.md)", "```", "`[span](nowhere.md)` and docs/missing.md"));
        Files.writeString(root.resolve("docs/guide.md"), String.join("\n",
                "# Guide", "## Second part (v2)", "[back](../README.md#title), [self](#guide), [web](https://example.org/x)",
                "## Second part (v2)", "[dup](#second-part-v2-1)"));
        List<String> found = problems(root, markdownFiles(root));
        assertThat(found).hasSize(5)
                .anySatisfy(p -> assertThat(p).contains("docs/gone.md").contains("no such file"))
                .anySatisfy(p -> assertThat(p).contains("../outside.md").contains("outside the repository"))
                .anySatisfy(p -> assertThat(p).contains("#nowhere").contains("no heading"))
                .anySatisfy(p -> assertThat(p).contains("DESIGN.md"))
                .anySatisfy(p -> assertThat(p).contains("docs/missing.md").contains("mentioned"));
    }

    private static Path repositoryRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("README.md")) && Files.isDirectory(p.resolve("docs"))
                    && Files.isRegularFile(p.resolve("pom.xml"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root (README.md, docs/, pom.xml) above " + Path.of("").toAbsolutePath());
    }

    private static List<Path> markdownFiles(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        out.add(root.resolve("README.md"));
        try (Stream<Path> s = Files.walk(root.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
        }
        return out;
    }

    /** Every problem found, one line each: file, line, the link or reference, what is wrong. */
    static List<String> problems(Path root, List<Path> files) throws IOException {
        List<String> out = new ArrayList<>();
        Map<Path, Set<String>> anchors = new HashMap<>();
        for (Path file : files) {
            String name = root.relativize(file).toString();
            List<String> lines = Files.readAllLines(file);
            boolean fenced = false;
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                String where = name + ":" + (i + 1) + ": ";
                Matcher outside = OUTSIDE.matcher(line);
                while (outside.find()) {
                    out.add(where + outside.group() + ": a file outside the repository");
                }
                if (line.strip().startsWith("```") || line.strip().startsWith("~~~")) {
                    fenced = !fenced;
                    continue;
                }
                if (fenced) {
                    continue;
                }
                Matcher mention = DOC_MENTION.matcher(LINK.matcher(line).replaceAll("]()")); // links: checked below
                while (mention.find()) {
                    if (!Files.isRegularFile(root.resolve(mention.group()))) {
                        out.add(where + mention.group() + ": mentioned, but no such file");
                    }
                }
                Matcher link = LINK.matcher(CODE_SPAN.matcher(line).replaceAll("``"));
                while (link.find()) {
                    String problem = check(root, file, link.group(1), anchors);
                    if (problem != null) {
                        out.add(where + link.group(1) + ": " + problem);
                    }
                }
            }
        }
        return out;
    }

    private static String check(Path root, Path file, String target, Map<Path, Set<String>> anchors) throws IOException {
        if (SCHEME.matcher(target).find()) {
            return null; // a web address
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        if (!resolved.startsWith(root)) {
            return "outside the repository";
        }
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (hash >= 0 && resolved.toString().endsWith(".md")) {
            String anchor = target.substring(hash + 1);
            if (!anchors.computeIfAbsent(resolved, DocsLinksTest::headingIds).contains(anchor)) {
                return "no heading with this id in " + root.relativize(resolved);
            }
        }
        return null;
    }

    /** GitHub's ids of a file's headings: lower case, punctuation dropped, spaces as hyphens, "-1", "-2" on repeats. */
    private static Set<String> headingIds(Path file) {
        try {
            Set<String> ids = new HashSet<>();
            Map<String, Integer> seen = new HashMap<>();
            boolean fenced = false;
            for (String line : Files.readAllLines(file)) {
                if (line.strip().startsWith("```") || line.strip().startsWith("~~~")) {
                    fenced = !fenced;
                    continue;
                }
                Matcher m = HEADING.matcher(line);
                if (!fenced && m.matches()) {
                    String id = m.group(1).toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\p{M}_\\- ]", "").replace(' ', '-');
                    int n = seen.merge(id, 1, Integer::sum) - 1;
                    ids.add(n == 0 ? id : id + "-" + n);
                }
            }
            return ids;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
