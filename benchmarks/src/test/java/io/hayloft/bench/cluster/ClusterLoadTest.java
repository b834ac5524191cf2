package io.hayloft.bench.cluster;

import org.assertj.core.data.Offset;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The parsers of {@link ClusterLoad}: wrk's report and the directory's Prometheus counters. */
class ClusterLoadTest {
    private static final String WRK = """
            Running 8s test @ http://127.0.0.1:42731
              2 threads and 16 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency     4.27ms   10.90ms  98.25ms   93.24%
              Latency Distribution
                 50%  430.00us
                 75%    1.86ms
                 90%    8.99ms
                 99%    1.20s
              28174 requests in 3.07s, 1.72GB read
            Requests/sec:   9191.60
            """;

    @Test
    void wrkPercentilesInEveryUnit() {
        assertThat(ClusterLoad.latency(WRK, "50%")).isEqualTo(0.43);
        assertThat(ClusterLoad.latency(WRK, "75%")).isEqualTo(1.86);
        assertThat(ClusterLoad.latency(WRK, "99%")).isEqualTo(1200.0);
        assertThat(ClusterLoad.latency(WRK, "99.9%")).isNaN();
    }

    @Test
    void directoryCountsSummedByOpOverStatuses() {
        String metrics = """
                # TYPE hayloft_directory_requests_seconds summary
                hayloft_directory_requests_seconds_count{op="lookup",status="200",} 120.0
                hayloft_directory_requests_seconds_count{op="lookup",status="404",} 3.0
                hayloft_directory_requests_seconds_sum{op="lookup",status="200",} 0.5
                hayloft_directory_requests_seconds_count{op="volume-map",status="304",} 1.0E3
                hayloft_directory_requests_seconds_count{status="200",op="heartbeat",} 7
                hayloft_store_requests_seconds_count{op="read",status="200",} 99.0
                """;
        Map<String, Double> c = ClusterLoad.parseCounts(metrics);
        assertThat(c).containsExactlyInAnyOrderEntriesOf(Map.of("lookup", 123.0, "volume-map", 1000.0, "heartbeat", 7.0));
        assertThat(ClusterLoad.parseCounts("")).isEmpty();
    }

    @Test
    void wrkScriptReadsTheListGiven() {
        String lua = ClusterLoad.wrkScript(Path.of("/tmp/x y/paths.txt"));
        assertThat(lua).contains("io.lines(\"/tmp/x y/paths.txt\")").contains("wrk.format(\"GET\", paths[math.random(#paths)])");
    }

    private static ClusterLoad.Row scenario(String name, double rate) {
        return new ClusterLoad.Row(name, rate, rate / 16, 1, 2, Double.NaN, "");
    }

    private static ClusterLoad.Row ratio(String name, double value) {
        return new ClusterLoad.Row(name, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, "", Double.NaN, Double.NaN, value);
    }

    @Test
    void roundsReduceToTheMedianRoundAndTheMedianRatio() {
        // the same ratio name twice per round (one per object size) stays two rows
        List<List<ClusterLoad.Row>> rounds = List.of(
                List.of(scenario("put", 300), ratio("put / store write", 0.30), ratio("client get / store (wrk)", 0.9),
                        ratio("client get / store (wrk)", 0.5)),
                List.of(scenario("put", 100), ratio("put / store write", 0.40), ratio("client get / store (wrk)", 0.7),
                        ratio("client get / store (wrk)", 0.6)),
                List.of(scenario("put", 200), ratio("put / store write", 0.35), ratio("client get / store (wrk)", 0.8),
                        ratio("client get / store (wrk)", 0.4)));
        List<ClusterLoad.Row> m = ClusterLoad.medians(rounds);
        assertThat(m).extracting(ClusterLoad.Row::name)
                .containsExactly("put", "put / store write", "client get / store (wrk)", "client get / store (wrk)");
        assertThat(m.get(0)).isSameAs(rounds.get(2).get(0));
        assertThat(m.get(1).ratio()).isEqualTo(0.35);
        assertThat(m.get(1).directoryOps()).isEqualTo(" (0.30-0.40 over 3 rounds)");
        assertThat(m.get(2).ratio()).isEqualTo(0.8);
        assertThat(m.get(3).ratio()).isEqualTo(0.5);
        // an even count takes the mean of the middle two ratios, and the lower middle round
        List<ClusterLoad.Row> two = ClusterLoad.medians(List.of(rounds.get(0), rounds.get(1)));
        assertThat(two.get(1).ratio()).isCloseTo(0.35, Offset.offset(1e-9));
        assertThat(two.get(0)).isSameAs(rounds.get(1).get(0));
        assertThat(ClusterLoad.medians(List.of(rounds.get(0)))).isSameAs(rounds.get(0));
    }
}
