package io.hayloft.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.cli.Hayloft;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory group deployed as docs/operations.md "A replicated directory" says: three separate
 * processes, each started with the directory unit's {@code ExecStart} and {@code --init} (its
 * {@code HAYLOFT_ARGS}), with the example configurations docs/deploy/directory-n1.yaml, -n2 and -n3
 * as written except for what must differ on one test machine (the replicas' addresses, on loopback
 * ports, and {@code dataDir}); then {@code hayloft directory group --json} over the three addresses
 * shows one leader and two followers. Also: the examples bind into {@link DirectoryConfig} as the
 * issue's configuration shape (flow mappings in {@code raft.peers}).
 */
class DirectoryGroupDeployTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private DeployedProcesses processes;

    @AfterEach
    void stop() throws InterruptedException {
        if (processes != null) {
            processes.stopAll(false);
        }
    }

    private static Path example(int i) {
        return DeployedProcesses.docs().resolve("deploy").resolve("directory-n" + i + ".yaml");
    }

    @Test
    void theExamplesBindAsTheIssuesShape() throws IOException {
        for (int i = 1; i <= 3; i++) {
            DirectoryConfig c = ConfigLoader.load(example(i), List.of(), DirectoryConfig.class).validate();
            assertThat(c.replicated()).isTrue();
            assertThat(c.raft.id).isEqualTo("n" + i);
            assertThat(c.raft.peers).hasSize(3);
            for (int j = 0; j < 3; j++) {
                DirectoryConfig.Peer p = c.raft.peers.get(j);
                assertThat(p.id).isEqualTo("n" + (j + 1));
                assertThat(p.raft).isEqualTo("10.0.0." + (j + 1) + ":7100");
                assertThat(p.http).isEqualTo("10.0.0." + (j + 1) + ":7000");
            }
            assertThat(c.raft.self().http).isEqualTo("10.0.0." + i + ":7000");
            assertThat(c.raft.electionTimeoutMillis).isEqualTo(500);
            assertThat(c.raft.snapshotEvery).isEqualTo(10_000);
        }
        // The files differ only in raft.id.
        for (int i = 2; i <= 3; i++) {
            assertThat(settings(example(i)).replace("  id: n" + i + "\n", "  id: n1\n")).isEqualTo(settings(example(1)));
        }
        // Packs are on by default; the upgrade step of docs/operations.md ("Rolling upgrades") turns them off with
        // one line in the raft section, or as an override.
        assertThat(ConfigLoader.load(example(1), List.of(), DirectoryConfig.class).validate().raft.packChanges).isTrue();
        Path upgrading = dir.resolve("upgrading.yaml");
        Files.writeString(upgrading, Files.readString(example(1)).replace("raft:\n", "raft:\n  packChanges: false\n"));
        assertThat(ConfigLoader.load(upgrading, List.of(), DirectoryConfig.class).validate().raft.packChanges).isFalse();
        assertThat(ConfigLoader.load(example(1), List.of("raft.packChanges=false"), DirectoryConfig.class).validate().raft.packChanges)
                .isFalse();
        // Overrides still apply to a file with a raft section, and a bad peer is named.
        DirectoryConfig o = ConfigLoader.load(example(2), List.of("raft.electionTimeoutMillis=800"), DirectoryConfig.class);
        assertThat(o.raft.electionTimeoutMillis).isEqualTo(800);
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, Files.readString(example(1)).replace("raft: 10.0.0.3:7100", "raft: nowhere"));
        DirectoryConfig b = ConfigLoader.load(bad, List.of(), DirectoryConfig.class);
        assertThatThrownBy(b::validate).hasMessageContaining("raft.peers n3: raft must be host:port");
    }

    /** The file without its comment lines. */
    private static String settings(Path f) throws IOException {
        StringBuilder b = new StringBuilder();
        for (String l : Files.readAllLines(f)) {
            if (!l.startsWith("#")) {
                b.append(l).append('\n');
            }
        }
        return b.toString();
    }

    @Test
    void threeReplicasStartedAsDocumentedFormAGroup() throws Exception {
        int[] raft = new int[3];
        int[] http = new int[3];
        for (int i = 0; i < 3; i++) {
            for (int[] a : new int[][] {raft, http}) {
                a[i] = Ports.free(); // distinct, below the ephemeral range
            }
        }
        processes = new DeployedProcesses(dir, "-Xmx256m", "-XX:TieredStopAtLevel=1");
        List<CompletableFuture<String>> started = new ArrayList<>();
        List<String> addresses = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            String yaml = Files.readString(example(i));
            for (int j = 1; j <= 3; j++) {
                yaml = yaml.replace("10.0.0." + j + ":7100", "127.0.0.1:" + raft[j - 1])
                        .replace("10.0.0." + j + ":7000", "127.0.0.1:" + http[j - 1]);
            }
            Path config = dir.resolve("directory-n" + i + ".yaml");
            Files.writeString(config, yaml);
            addresses.add("127.0.0.1:" + http[i - 1]);
            List<String> args = new ArrayList<>();
            for (String a : DeployedProcesses.execStart("hayloft-directory.service", "")) {
                args.add(a.endsWith("directory.yaml") ? config.toString() : a);
            }
            args.add("--init"); // HAYLOFT_ARGS=--init, as docs/operations.md says for a group
            args.add("dataDir=" + dir.resolve("n" + i + "-data"));
            assertThat(args).startsWith("directory", "--config");
            started.add(processes.start("n" + i, args));
        }
        for (CompletableFuture<String> f : started) {
            assertThat(f.get(150, TimeUnit.SECONDS)).contains("listening on 127.0.0.1:");
        }
        String list = String.join(",", addresses);
        String[] last = new String[3];
        Await.until("hayloft directory group exits 0 (a leader) with every replica healthy", Duration.ofSeconds(90), () -> {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int code = Hayloft.run(new PrintWriter(out), new PrintWriter(err), "directory", "group", "-d", list, "--json");
            last[0] = Integer.toString(code);
            last[1] = out.toString();
            last[2] = err.toString();
            // A leader, and every replica answered the one asked (on a loaded machine a peer may miss the 1 s it is given).
            return code == 0 && !last[1].contains("UNREACHABLE") && !last[1].contains("CANDIDATE");
        });
        JsonNode g = JSON.readTree(last[1]); // only the JSON on stdout
        assertThat(g.path("leader").asText()).isIn("n1", "n2", "n3");
        List<String> roles = new ArrayList<>();
        for (JsonNode r : g.path("replicas")) {
            roles.add(r.path("role").asText());
            assertThat(r.path("appliedIndex").isIntegralNumber()).as("appliedIndex of %s", r).isTrue();
            assertThat(r.path("http").asText()).isIn(addresses);
        }
        assertThat(roles).containsExactlyInAnyOrder("LEADER", "FOLLOWER", "FOLLOWER");
        for (int i = 1; i <= 3; i++) {
            assertThat(dir.resolve("n" + i + "-data").resolve("db")).isDirectory();
            assertThat(dir.resolve("n" + i + "-data").resolve("raft")).isDirectory();
        }
        processes.stopAll(true); // SIGTERM: each replica exits 143, as its unit expects
        processes = null;
    }
}
