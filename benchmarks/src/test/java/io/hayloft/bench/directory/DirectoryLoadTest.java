package io.hayloft.bench.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@link DirectoryLoad}'s options, op order, table and JSON (no processes started). */
class DirectoryLoadTest {

    private static DirectoryLoad.Result r(String op, int threads, double opsPerSec, Double late) {
        return new DirectoryLoad.Result(op, threads, (long) opsPerSec * 10, 0, 10, opsPerSec, 1.5, 9.25, late, null);
    }

    @Test
    void defaultsMeasureEveryOpIncludingTheWideAndFleetRows() {
        DirectoryLoad d = new DirectoryLoad();
        new CommandLine(d).parseArgs();
        assertThat(d.ops).isEqualTo(DirectoryLoad.OPS);
        assertThat(DirectoryLoad.OPS).containsExactly("lease", "volume-create", "read-only", "read-only-x64", "stripe-map",
                "heartbeat", "heartbeat-x64", "heartbeat-fleet");
        assertThat(d.threads).isEqualTo(8);
        assertThat(d.wideThreads).isEqualTo(64);
        assertThat(d.fleet).isEqualTo(1000);
        assertThat(d.fleetConnections).isEqualTo(32);
        assertThat(d.prepareSeconds).isEqualTo(120);
    }

    @Test
    void noMoreVolumesThanTheStoresCanHoldOpen() {
        assertThat(DirectoryLoad.volumeCap(20_000, 3)).isEqualTo(9_000); // every store holds every volume
        assertThat(DirectoryLoad.volumeCap(20_000, 6)).isEqualTo(18_000); // each holds half
        assertThat(DirectoryLoad.volumeCap(20_000, 1)).isEqualTo(9_000); // one replica each
        assertThat(DirectoryLoad.volumeCap(1_024, 3)).isZero();
    }

    @Test
    void volumesForTheMeasuredSecondsWithAMargin() {
        assertThat(DirectoryLoad.volumesWanted(2000, 10, 64)).isEqualTo(50_128);
        assertThat(DirectoryLoad.volumesWanted(0, 10, 64)).isEqualTo(128); // the calibration sealed none
    }

    @Test
    void optionsParsedAndOpsRunInTheirFixedOrder() {
        DirectoryLoad d = new DirectoryLoad();
        new CommandLine(d).parseArgs("--ops", "heartbeat-fleet,read-only-x64,heartbeat-x64,read-only-x64", "--wide-threads", "16",
                "--fleet", "200", "--fleet-connections", "4");
        assertThat(d.wideThreads).isEqualTo(16);
        assertThat(d.fleet).isEqualTo(200);
        assertThat(d.fleetConnections).isEqualTo(4);
        assertThat(DirectoryLoad.ordered(d.ops)).containsExactly("read-only-x64", "heartbeat-x64", "heartbeat-fleet");
    }

    @Test
    void unknownOpsAndEmptyFleetsRefusedBeforeAnyProcessStarts() {
        for (String[] args : List.of(new String[] {"--ops", "heartbeat 1000/s"}, new String[] {"--fleet", "0"},
                new String[] {"--wide-threads", "0"}, new String[] {"--prepare-seconds", "-1"})) {
            StringWriter err = new StringWriter();
            CommandLine cl = new CommandLine(new DirectoryLoad());
            cl.setErr(new PrintWriter(err));
            cl.setOut(new PrintWriter(new StringWriter()));
            assertThat(cl.execute(args)).as(String.join(" ", args)).isEqualTo(2);
            assertThat(err.toString()).contains("hayloft bench directory:");
        }
    }

    @Test
    void tableShowsTheNewRowsTheLateColumnAndTheRatios() {
        Map<Integer, Map<String, DirectoryLoad.Result>> all = new LinkedHashMap<>();
        Map<String, DirectoryLoad.Result> one = new LinkedHashMap<>();
        one.put("read-only", r("read-only", 8, 100, null));
        one.put("read-only-x64", r("read-only-x64", 64, 120, null));
        one.put("heartbeat-x64", r("heartbeat-x64", 64, 400, null));
        one.put("heartbeat-fleet", r("heartbeat-fleet", 32, 1000, 0.0));
        Map<String, DirectoryLoad.Result> three = new LinkedHashMap<>();
        three.put("read-only", r("read-only", 8, 10, null));
        three.put("read-only-x64", r("read-only-x64", 64, 30, null));
        three.put("heartbeat-fleet", r("heartbeat-fleet", 32, 500, 0.125));
        all.put(1, one);
        all.put(3, three);
        String table = DirectoryLoad.table(all);
        List<String> lines = table.lines().toList();
        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).startsWith("op              |  1 repl.:").contains(" late").endsWith(" |   3/1");
        assertThat(lines.get(1)).startsWith("read-only       |").contains("100     1.50     9.25       -").endsWith(" |  0.10");
        assertThat(lines.get(2)).startsWith("read-only-x64   |").endsWith(" |  0.25");
        assertThat(lines.get(3)).startsWith("heartbeat-x64   |").contains("|                    -        -        -       -")
                .endsWith(" |     -");
        assertThat(lines.get(4)).startsWith("heartbeat-fleet |").contains("1000     1.50     9.25   0.00%")
                .contains("500     1.50     9.25  12.50%").endsWith(" |  0.50");
        // every row's columns line up with the header's
        assertThat(lines.stream().map(String::length).distinct()).hasSize(1);
    }

    @Test
    void tableWithoutAFleetRowHasNoLateColumn() {
        Map<Integer, Map<String, DirectoryLoad.Result>> all = Map.of(1, Map.of("heartbeat-x64", r("heartbeat-x64", 64, 400, null)));
        String t = DirectoryLoad.table(all);
        assertThat(t).doesNotContain("late");
        assertThat(t.lines().toList().get(1)).isEqualTo("heartbeat-x64   |                  400     1.50     9.25");
    }

    @Test
    void jsonAndProgressLineCarryThreadsAndTheLateFraction() throws Exception {
        ObjectMapper json = new ObjectMapper();
        JsonNode fleet = json.readTree(json.writeValueAsString(r("heartbeat-fleet", 32, 990, 0.0123)));
        assertThat(fleet.path("threads").asInt()).isEqualTo(32);
        assertThat(fleet.path("lateFraction").asDouble()).isEqualTo(0.0123);
        JsonNode wide = json.readTree(json.writeValueAsString(r("read-only-x64", 64, 50, null)));
        assertThat(wide.path("threads").asInt()).isEqualTo(64);
        assertThat(wide.get("lateFraction").isNull()).isTrue();
        assertThat(DirectoryLoad.line(r("heartbeat-fleet", 32, 990, 0.0123)))
                .contains("heartbeat-fleet").contains("(32 threads, 9900 ops, 0 errors, 1.23% more than 1 s late)");
        assertThat(DirectoryLoad.line(r("read-only-x64", 64, 50, null))).contains("(64 threads, 500 ops, 0 errors)");
    }

    @Test
    void simulatedStoresSendValidHeartbeats() throws Exception {
        JsonNode hb = new ObjectMapper().readTree(DirectoryLoad.heartbeatBody("fleet-999", "127.0.0.1:4321", "fleet-rack-7"));
        assertThat(hb.path("storeId").asText()).matches("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
        assertThat(hb.path("address").asText()).isEqualTo("127.0.0.1:4321");
        assertThat(hb.path("volumes").isArray()).isTrue();
        assertThat(hb.path("volumes")).isEmpty();
    }
}
