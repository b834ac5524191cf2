package io.hayloft.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hayloft.s3.S3Config;
import io.hayloft.serverkit.config.ConfigLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Checks of docs/deploy and docs/grafana that need no running server: under {@code
 * ProtectSystem=strict} a server can write only to its unit's {@code ReadWritePaths}, so every path
 * its example configuration writes to must be there; every unit runs the fat jar the same way; the
 * dashboard is importable (unique panel ids, every query on the {@code datasource} variable).
 */
class DeployFilesTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Path DOCS = DeployedProcesses.docs();
    private static final Path DEPLOY = DOCS.resolve("deploy");

    private static List<String> unitValues(String unit, String key) throws IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(DEPLOY.resolve(unit))) {
            if (line.startsWith(key + "=")) {
                out.addAll(Arrays.asList(line.substring(key.length() + 1).trim().split("\\s+")));
            }
        }
        return out;
    }

    private static void writable(String unit, String path) throws IOException {
        List<String> rw = unitValues(unit, "ReadWritePaths").stream().map(p -> p.startsWith("-") ? p.substring(1) : p).toList();
        assertThat(rw).as("%s must let the server write %s (ProtectSystem=strict)", unit, path)
                .anyMatch(p -> Path.of(path).startsWith(Path.of(p)));
    }

    @Test
    void everyPathAConfigWritesIsWritableUnderItsUnit() throws IOException {
        JsonNode d = YAML.readTree(DEPLOY.resolve("directory.yaml").toFile());
        writable("hayloft-directory.service", d.path("dataDir").asText());
        writable("hayloft-directory.service", "/var/backups/hayloft/directory-1"); // docs/operations.md's backups
        for (JsonNode dataDir : YAML.readTree(DEPLOY.resolve("store.yaml").toFile()).path("dataDirs")) {
            writable("hayloft-store@.service", dataDir.asText());
        }
        writable("hayloft-raid.service", YAML.readTree(DEPLOY.resolve("raid.yaml").toFile()).path("spoolDir").asText());
        for (String unit : List.of("hayloft-directory.service", "hayloft-store@.service", "hayloft-cache.service", "hayloft-raid.service",
                "hayloft-s3.service")) {
            writable(unit, "/var/log/hayloft/gc.log");
            assertThat(unitValues(unit, "ExecStart")).as(unit)
                    .containsSubsequence("/usr/bin/java", "$JAVA_OPTS", "--add-modules", "jdk.incubator.vector", "-jar",
                            "/opt/hayloft/hayloft.jar").endsWith("$HAYLOFT_ARGS");
            assertThat(unitValues(unit, "SuccessExitStatus")).as(unit).containsExactly("143");
            assertThat(unitValues(unit, "User")).as(unit).containsExactly("hayloft");
        }
    }

    /** docs/deploy/s3.yaml is valid as it stands, with the directory's admin token, and takes overrides of the directory and port. */
    @Test
    void theS3ExampleConfigValidatesAndTakesOverrides() throws IOException {
        S3Config c = ConfigLoader.load(DEPLOY.resolve("s3.yaml"), List.of("directory=127.0.0.1:7123", "port=0"), S3Config.class)
                .validate();
        assertThat(c.directories()).containsExactly("127.0.0.1:7123");
        assertThat(c.port).isZero();
        assertThat(c.users()).containsKey("hayloft");
        JsonNode d = YAML.readTree(DEPLOY.resolve("directory.yaml").toFile());
        assertThat(c.directoryToken).as("s3.yaml's directoryToken is directory.yaml's adminToken").isEqualTo(d.path("adminToken").asText());
        assertThat(unitValues("hayloft-s3.service", "ExecStart")).containsSubsequence("s3", "--config", "/etc/hayloft/s3.yaml");
    }

    @Test
    void theDashboardIsImportable() throws IOException {
        JsonNode dash = new ObjectMapper().readTree(DOCS.resolve("grafana/hayloft.json").toFile());
        assertThat(dash.path("uid").asText()).isNotBlank();
        assertThat(dash.path("title").asText()).isEqualTo("Hayloft");
        assertThat(dash.path("schemaVersion").asInt()).isPositive();
        JsonNode var = dash.path("templating").path("list").get(0);
        assertThat(var.path("name").asText()).isEqualTo("datasource");
        assertThat(var.path("type").asText()).isEqualTo("datasource");
        assertThat(var.path("query").asText()).isEqualTo("prometheus");
        Set<Integer> ids = new HashSet<>();
        int queries = 0;
        for (JsonNode p : dash.path("panels")) {
            assertThat(ids.add(p.path("id").asInt())).as("panel id %s unique", p.path("id")).isTrue();
            assertThat(p.path("gridPos").path("w").asInt()).as("panel %s width", p.path("title")).isBetween(1, 24);
            assertThat(p.path("title").asText()).isNotBlank();
            if (p.path("type").asText().equals("row")) {
                continue;
            }
            assertThat(p.path("description").asText()).as("panel %s says what it shows", p.path("title")).isNotBlank();
            assertThat(p.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
            for (JsonNode t : p.path("targets")) {
                assertThat(t.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
                assertThat(t.path("expr").asText()).isNotBlank();
                queries++;
            }
        }
        assertThat(queries).isGreaterThan(20);
    }
}
