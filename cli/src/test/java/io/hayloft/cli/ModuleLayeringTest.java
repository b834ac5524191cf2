package io.hayloft.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.Architectures;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layering of the README's module table, checked on the compiled main classes of every module
 * on this module's classpath (cli depends on every module but {@code raid-spark} and
 * {@code benchmarks}, which sit above everything else and on which nothing depends), and the
 * package rules checked on every module's source tree.
 *
 * <p>From the bottom up: {@code format}; {@code erasure}; {@code server-kit}; cold reads
 * ({@code cold-read}); {@code client}; the servers ({@code store-server}, {@code directory-server},
 * {@code cache-server}, {@code raid-node}, the S3 gateway {@code s3-gateway}, and {@code raid-spark} on the
 * raid-node); {@code cli};
 * {@code benchmarks}. A module may use only the modules {@link #MAY_USE} names for it: a dependency
 * that points up (format on the client) or sideways (one server on another) fails. {@code test-kit}
 * is for tests only: no main class uses it. Each module owns one package tree ({@link #ROOTS}), so
 * a package a module adds later (say {@code io.hayloft.format.directory}) is placed by the tree it
 * is in, and no package is in two modules.
 *
 * <p>Only main classes are imported: tests may cross the layers (a raid-node test starts stores and a
 * directory), and cli's tests of the directory live in package {@code io.hayloft.directory}.
 *
 * <p>Not thread-safe (a JUnit test class).
 */
class ModuleLayeringTest {
    /** Each module's one package tree. */
    static final Map<String, String> ROOTS = new LinkedHashMap<>();
    /** The modules each module's main classes may use besides itself (the README table, closed under "depends on"). */
    static final Map<String, Set<String>> MAY_USE = new LinkedHashMap<>();

    static {
        module("format", "io.hayloft.format");
        module("erasure", "io.hayloft.erasure");
        module("server-kit", "io.hayloft.serverkit", "format");
        module("cold-read", "io.hayloft.cold", "format", "erasure");
        module("client", "io.hayloft.client", "format", "erasure", "cold-read");
        for (String[] server : new String[][] {{"store-server", "io.hayloft.store"}, {"directory-server", "io.hayloft.directory"},
                {"cache-server", "io.hayloft.cache"}, {"raid-node", "io.hayloft.raid"}, {"s3-gateway", "io.hayloft.s3"}}) {
            module(server[0], server[1], "format", "erasure", "server-kit", "cold-read", "client");
        }
        module("raid-spark", "io.hayloft.spark", "format", "erasure", "server-kit", "cold-read", "client", "raid-node");
        module("cli", "io.hayloft.cli", "format", "erasure", "server-kit", "cold-read", "client", "store-server",
                "directory-server", "cache-server", "raid-node", "raid-spark", "s3-gateway");
        module("benchmarks", "io.hayloft.bench", "format", "erasure", "server-kit", "cold-read", "client", "store-server",
                "directory-server", "cache-server", "raid-node", "raid-spark", "s3-gateway", "cli");
        module("test-kit", "io.hayloft.testkit");
    }

    private static void module(String name, String root, String... mayUse) {
        ROOTS.put(name, root);
        MAY_USE.put(name, Set.of(mayUse));
    }

    /** The modules above cli, whose classes cli's tests cannot see; nothing depends on them. */
    private static final Set<String> NOT_ON_CLASSPATH = Set.of("raid-spark", "benchmarks");

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.hayloft");
    }

    @Test
    void everyModuleOnTheClasspathIsImported() {
        for (String module : ROOTS.keySet()) {
            if (NOT_ON_CLASSPATH.contains(module)) {
                continue;
            }
            assertThat(classes.containPackage(ROOTS.get(module)))
                    .as("main classes of %s (%s) on cli's test classpath", module, ROOTS.get(module)).isTrue();
        }
    }

    @Test
    void dependenciesPointDownTheModuleTable() {
        layering().check(classes);
    }

    @Test
    void theLayeringRuleFailsOnASidewaysDependency() {
        // cli's tests of the directory (package io.hayloft.directory) start stores: a server using
        // another server, which main code may not do.
        JavaClasses tests = new ClassFileImporter().withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
                .importPackages("io.hayloft.directory");
        assertThatThrownBy(() -> layering().check(tests)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.hayloft.directory.").hasMessageContaining("io.hayloft.store.");
    }

    /** The rule: each module's classes use only the modules {@link #MAY_USE} names (raid-spark and benchmarks are not on this classpath). */
    private static ArchRule layering() {
        LayeredArchitecture layers = Architectures.layeredArchitecture().consideringOnlyDependenciesInLayers();
        for (Map.Entry<String, String> m : ROOTS.entrySet()) {
            layers = (NOT_ON_CLASSPATH.contains(m.getKey()) ? layers.optionalLayer(m.getKey()) : layers.layer(m.getKey()))
                    .definedBy(m.getValue() + "..");
        }
        for (Map.Entry<String, Set<String>> m : MAY_USE.entrySet()) {
            layers = m.getValue().isEmpty()
                    ? layers.whereLayer(m.getKey()).mayNotAccessAnyLayer()
                    : layers.whereLayer(m.getKey()).mayOnlyAccessLayers(m.getValue().toArray(String[]::new));
        }
        return layers.because("a module uses only the modules below it in the README's module table,"
                + " never one beside it");
    }

    @Test
    void noMainClassUsesTheTestKit() {
        noClasses().that().resideOutsideOfPackage("io.hayloft.testkit..")
                .should().dependOnClassesThat().resideInAPackage("io.hayloft.testkit..")
                .because("test-kit is a test-scope dependency only").check(classes);
    }

    @Test
    void theLibrariesBelowTheServersUseNoNettyAndNoRocksDb() {
        noClasses().that().resideInAnyPackage("io.hayloft.format..", "io.hayloft.erasure..", "io.hayloft.cold..",
                        "io.hayloft.client..")
                .should().dependOnClassesThat().resideInAnyPackage("io.netty..", "org.rocksdb..")
                .because("applications embed the client, cold reads, the codes and the formats without a server's stack")
                .check(classes);
        // the rule can fail: the import sees the server kit's uses of Netty (classes it does not load)
        assertThatThrownBy(() -> noClasses().that().resideInAPackage("io.hayloft.serverkit..")
                .should().dependOnClassesThat().resideInAPackage("io.netty..").check(classes))
                .isInstanceOf(AssertionError.class).hasMessageContaining("io.netty.");
    }

    @Test
    void everyModuleHasOnePackageTreeAndNoPackageIsInTwoModules() throws IOException {
        Path root = repositoryRoot();
        List<String> modules = modules(root);
        assertThat(ROOTS.keySet()).as("modules of the parent pom.xml, each with its package tree here")
                .containsExactlyInAnyOrderElementsOf(modules);
        Map<String, Set<String>> owners = new TreeMap<>();
        List<String> outside = new ArrayList<>();
        for (String module : modules) {
            String tree = ROOTS.get(module);
            for (String pkg : mainPackages(root.resolve(module))) {
                owners.computeIfAbsent(pkg, p -> new TreeSet<>()).add(module);
                if (!pkg.equals(tree) && !pkg.startsWith(tree + ".")) {
                    outside.add(module + ": " + pkg + " (outside " + tree + ")");
                }
            }
        }
        assertThat(outside).as("main packages outside their module's tree").isEmpty();
        assertThat(owners).as("main packages of the modules").isNotEmpty();
        owners.forEach((pkg, in) -> assertThat(in).as("modules with main classes in package %s", pkg).hasSize(1));
    }

    /** The checkout: surefire runs in the module's directory ({@code basedir}), one below the parent pom. */
    private static Path repositoryRoot() {
        Path root = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize().getParent();
        assertThat(root.resolve("pom.xml")).as("the parent pom above cli").isRegularFile();
        return root;
    }

    private static List<String> modules(Path root) throws IOException {
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(root.resolve("pom.xml")));
        List<String> modules = new ArrayList<>();
        while (m.find()) {
            modules.add(m.group(1).trim());
        }
        return modules;
    }

    /** The packages of the .java files under {@code module/src/main/java}. */
    private static Set<String> mainPackages(Path module) throws IOException {
        Path src = module.resolve("src/main/java");
        Set<String> packages = new TreeSet<>();
        if (!Files.isDirectory(src)) {
            return packages;
        }
        try (Stream<Path> files = Files.walk(src)) {
            files.filter(f -> f.toString().endsWith(".java") && !f.getFileName().toString().equals("module-info.java"))
                    .forEach(f -> packages.add(src.relativize(f.getParent()).toString().replace(f.getFileSystem().getSeparator(), ".")));
        }
        return packages;
    }
}
