package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.directory.DirectoryConfig;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@link LocalGroup} lays a group out before anything runs: ids, given or chosen ports, data
 * directories, and each replica's configuration (the base's settings and raft tunables kept, its place
 * in the group set). The running group is exercised by RaftGroupTest, RaftRestartTest and NamespaceRaftTest.
 */
class LocalGroupTest {
    @TempDir
    Path dir;

    private static DirectoryConfig base() {
        DirectoryConfig c = new DirectoryConfig();
        c.adminToken = "token";
        c.raft = new DirectoryConfig.Raft();
        c.raft.snapshotEvery = 20;
        c.raft.electionTimeoutMillis = 300;
        return c;
    }

    @Test
    void givenPortsAndNamesMakeEachReplicasPlace() throws Exception {
        try (LocalGroup g = LocalGroup.builder(3, LocalGroupTest::base, dir).dirNames(i -> "directory-" + i)
                .ports(i -> 7100 + i, i -> 40100 + i).build()) {
            assertThat(g.size()).isEqualTo(3);
            assertThat(g.addresses()).containsExactly("127.0.0.1:7100", "127.0.0.1:7101", "127.0.0.1:7102");
            assertThat(g.peers()).extracting(p -> p.id + " " + p.raft + " " + p.http).containsExactly(
                    "n1 127.0.0.1:40100 127.0.0.1:7100", "n2 127.0.0.1:40101 127.0.0.1:7101", "n3 127.0.0.1:40102 127.0.0.1:7102");
            DirectoryConfig c = g.config(1).validate();
            assertThat(c.dataDir).isEqualTo(dir.resolve("directory-1").toString());
            assertThat(c.port).isEqualTo(7101);
            assertThat(c.init).isTrue();
            assertThat(c.adminToken).isEqualTo("token");
            assertThat(c.raft.id).isEqualTo("n2");
            assertThat(c.raft.self().raft).isEqualTo("127.0.0.1:40101");
            assertThat(c.raft.snapshotEvery).isEqualTo(20);
            assertThat(c.raft.electionTimeoutMillis).isEqualTo(300);
            assertThat(g.config(1)).as("a fresh copy each time").isNotSameAs(c);
            assertThat(g.leader()).as("nothing runs").isEqualTo(-1);
            assertThat(g.server(0)).isNull();
            assertThat(g.appliedIndex(0)).isEqualTo(-1);
        }
    }

    @Test
    void chosenPortsAreFreeAndDistinctAndABaseWithoutRaftGetsTheDefaults() throws Exception {
        try (LocalGroup g = LocalGroup.builder(3, DirectoryConfig::new, dir).build()) {
            Set<String> ports = new HashSet<>();
            g.peers().forEach(p -> {
                ports.add(p.raft.substring(p.raft.lastIndexOf(':') + 1));
                ports.add(p.http.substring(p.http.lastIndexOf(':') + 1));
            });
            assertThat(ports).hasSize(6).doesNotContain("0");
            DirectoryConfig c = g.config(2).validate();
            assertThat(c.dataDir).isEqualTo(dir.resolve("n3").toString());
            assertThat(c.raft.peers).hasSize(3);
            assertThat(c.raft.electionTimeoutMillis).isEqualTo(new DirectoryConfig.Raft().electionTimeoutMillis);
            assertThat(g.dataDir(0)).isEqualTo(dir.resolve("n1"));
        }
    }

    @Test
    void badIndexesAndSizesAreRefused() throws Exception {
        assertThatThrownBy(() -> LocalGroup.builder(0, DirectoryConfig::new, dir)).isInstanceOf(IllegalArgumentException.class);
        try (LocalGroup g = LocalGroup.builder(1, DirectoryConfig::new, dir).build()) {
            assertThatThrownBy(() -> g.stop(1)).hasMessageContaining("0..0, was 1");
            assertThatThrownBy(() -> g.server(-1)).isInstanceOf(IllegalArgumentException.class);
            assertThat(List.of(LocalGroup.replicaId(0), LocalGroup.replicaId(4))).containsExactly("n1", "n5");
        }
    }
}
