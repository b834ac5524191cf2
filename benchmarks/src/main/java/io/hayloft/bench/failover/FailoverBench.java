package io.hayloft.bench.failover;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.hayloft.serverkit.io.FileTrees;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.SimulatedHosts;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code hayloft bench failover}: leader loss on real processes (issue 26, "What it must show"). Starts
 * a replicated directory of three replicas and three stores as separate processes from the fat jar
 * ({@link GroupProcesses}; on simulated hosts when network namespaces can be made, else on loopback),
 * runs {@link WriteLoad} (8 writer threads, a probe whose every put takes a lease of one key, a lease
 * collector, two raid-lease contenders), and kills the leader with SIGKILL {@code --kills} times, each
 * time starting the killed replica again with its same command once the figures are in and waiting
 * until every replica names one leader again.
 *
 * <p>Per kill: the time to a new leader (from the kill to the first {@code GET /v1/group/self} of a
 * surviving replica naming another leader; that is the {@code leader} of {@code GET /v1/group}, without
 * asking the peers) and the write gap (from the kill to the acknowledgement of the first probe put
 * started after it). At the end every acknowledged photo is read back and compared, no key may have
 * been handed out twice and no two raid lease holders may overlap. Prints the median and max of both
 * figures and a JSON summary; exit 1 on any violation, 2 on bad usage.
 *
 * <p>Not thread-safe (one run).
 */
@Command(name = "failover", mixinStandardHelpOptions = true,
        description = "Kill -9 the leader of a 3-replica directory group under write load: time to a new leader, write gap, "
                + "and nothing acknowledged lost.")
public final class FailoverBench implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--kills", defaultValue = "20", description = "leader kills (default ${DEFAULT-VALUE})")
    int kills;

    @Option(names = "--writers", defaultValue = "8", description = "writer threads (default ${DEFAULT-VALUE})")
    int writers;

    @Option(names = "--writer-pause", defaultValue = "0", paramLabel = "MS",
            description = "pause of each writer between puts, ms (default ${DEFAULT-VALUE}: as fast as they go)")
    long writerPause;

    @Option(names = "--election-timeout", defaultValue = "500", paramLabel = "MS",
            description = "raft.electionTimeoutMillis of the replicas (default ${DEFAULT-VALUE}, the directory's default)")
    long electionTimeout;

    @Option(names = "--probe-backoff", defaultValue = "50,1000", split = ",", paramLabel = "MS",
            description = "the probe client's retry backoff, initial,max in ms (default ${DEFAULT-VALUE}, the client's default)")
    List<Long> probeBackoff;

    @Option(names = "--jar", paramLabel = "FILE", description = "the hayloft fat jar (default: cli/target/hayloft.jar under "
            + "the current directory or its parents)")
    Path jar;

    @Option(names = "--heap", defaultValue = "512m", description = "heap of each server process, -Xms and -Xmx as the deploy "
            + "examples set them (default ${DEFAULT-VALUE})")
    String heap;

    @Option(names = "--gc", defaultValue = "G1", paramLabel = "G1|Serial|Parallel|Z",
            description = "garbage collector of each server process (default ${DEFAULT-VALUE}, the JVM's and the deploy examples')")
    String gc;

    @Option(names = "--trace", description = "after each kill, print the probe client's attempts until its first acknowledged put")
    boolean trace;

    @Option(names = "--loopback", description = "run on loopback even where simulated hosts can be made")
    boolean loopback;

    @Option(names = "--dir", description = "where configs, data and logs go (default: a temporary directory, deleted afterwards "
            + "unless the run fails)")
    Path dir;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (kills < 1 || writers < 0 || probeBackoff.size() != 2) {
            err.println("hayloft bench failover: --kills >= 1, --writers >= 0, --probe-backoff initial,max");
            return 2;
        }
        if (!List.of("G1", "Serial", "Parallel", "Z").contains(gc)) {
            err.println("hayloft bench failover: --gc must be G1, Serial, Parallel or Z, was " + gc);
            return 2;
        }
        Path fatJar = jar != null ? jar : findJar();
        if (fatJar == null || !Files.isRegularFile(fatJar)) {
            err.println("hayloft bench failover: no fat jar (build it: mvn -B -o -pl cli -am -DskipTests package), or give --jar");
            return 2;
        }
        Path work = dir != null ? dir : Files.createTempDirectory("hayloft-failover-");
        GroupProcesses.Options o = new GroupProcesses.Options();
        o.dir = work;
        SimulatedHosts.Availability a = loopback ? new SimulatedHosts.Availability(false, "--loopback") : availability();
        o.simulated = a.usable();
        o.electionTimeoutMillis = electionTimeout;
        o.launcher = GroupProcesses.jarLauncher(fatJar, List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+Use" + gc + "GC", "-Xss512k"));
        out.printf("hayloft bench failover: %d kills, %d writers, election timeout %d ms, probe backoff %s ms, heap %s, %s GC, on %s;"
                        + " data in %s%n", kills, writers, electionTimeout, probeBackoff, heap, gc, o.simulated ? "simulated hosts" : "loopback (" + a.reason() + ")", work);
        out.flush();
        boolean ok = false;
        try (GroupProcesses g = GroupProcesses.start(o);
             WriteLoad load = new WriteLoad(g.directoryAddresses(), writers, writerPause,
                     new Duration[] {Duration.ofMillis(probeBackoff.get(0)), Duration.ofMillis(probeBackoff.get(1))})) {
            load.start();
            long before = load.probeAcks();
            Await.until("the first probe puts", Duration.ofSeconds(180), () -> load.probeAcks() >= before + 5);
            List<Double> leaderMillis = new ArrayList<>();
            List<Double> gapMillis = new ArrayList<>();
            List<Map<String, Object>> rounds = new ArrayList<>();
            for (int i = 1; i <= kills; i++) {
                rounds.add(killOnce(g, load, i, leaderMillis, gapMillis, out));
            }
            load.stop();
            out.printf("verifying: reading back %,d acknowledged photos...%n", load.acknowledged());
            out.flush();
            WriteLoad.Verdict v = load.verify();
            Map<String, Object> summary = new LinkedHashMap<>();
            summary.put("hosts", o.simulated ? "simulated" : "loopback");
            summary.put("kills", kills);
            summary.put("writers", writers);
            summary.put("electionTimeoutMillis", electionTimeout);
            summary.put("probeBackoffMillis", probeBackoff);
            summary.put("newLeaderMillis", stats(leaderMillis));
            summary.put("writeGapMillis", stats(gapMillis));
            summary.put("targetsMet", median(gapMillis) <= 1500 && max(gapMillis) <= 3000);
            summary.put("acknowledged", v.acknowledged());
            summary.put("readBack", v.readBack());
            summary.put("mismatches", v.mismatches());
            summary.put("missing", v.missing());
            summary.put("keysChecked", v.keysChecked());
            summary.put("duplicateKeys", v.duplicateKeys());
            summary.put("leaseRanges", v.leaseRanges());
            summary.put("raidGrants", v.raidGrants());
            summary.put("raidOverlaps", v.raidOverlaps());
            summary.put("writerFailures", load.writerFailures());
            summary.put("probeFailures", load.probeFailures());
            summary.put("problems", v.problems());
            summary.put("rounds", rounds);
            out.println();
            out.printf(Locale.ROOT, "time to a new leader: median %.0f ms, max %.0f ms (of %d)%n", median(leaderMillis),
                    max(leaderMillis), leaderMillis.size());
            out.printf(Locale.ROOT, "write gap:            median %.0f ms, max %.0f ms (of %d; targets: median <= 1500, max <= 3000: %s)%n",
                    median(gapMillis), max(gapMillis), gapMillis.size(), summary.get("targetsMet"));
            out.printf("acknowledged photos %,d, read back byte-exact %,d; keys checked %,d, handed out twice %d; raid lease grants %d, "
                    + "overlapping holders %d%n", v.acknowledged(), v.readBack(), v.keysChecked(), v.duplicateKeys(),
                    v.raidGrants(), v.raidOverlaps());
            v.problems().forEach(p -> out.println("VIOLATION: " + p));
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(summary));
            ok = v.ok() && v.readBack() == v.acknowledged();
            return ok ? 0 : 1;
        } finally {
            out.flush();
            if (dir == null && ok) {
                try {
                    FileTrees.delete(work);
                } catch (IOException e) {
                    err.println("cannot delete " + work + ": " + e.getMessage());
                }
            } else if (!ok) {
                err.println("logs and data kept in " + work);
            }
        }
    }

    private static SimulatedHosts.Availability availability() {
        try {
            return SimulatedHosts.available();
        } catch (AssertionError e) {
            return new SimulatedHosts.Availability(false, e.getMessage());
        }
    }

    /** One kill's figures; {@code trace}: the probe client's attempts from the kill to its first acknowledged put. */
    record Kill(String killed, String newLeader, double newLeaderMillis, double writeGapMillis, long probeFailures,
                List<String> trace) {
    }

    /**
     * One kill: waits for a settled group (every running replica names one leader) and 10 more probe
     * acknowledgements, kills the leader with SIGKILL, measures the time to a new leader and the write
     * gap, then starts the killed replica again with its same command.
     */
    static Kill killLeader(GroupProcesses g, WriteLoad load, int i) throws Exception {
        GroupProcesses.Node leader = g.awaitLeader(Duration.ofSeconds(180)); // the replica killed last must be back
        long acks = load.probeAcks();
        Await.until("probe puts acknowledged before kill " + i, Duration.ofSeconds(60), () -> load.probeAcks() >= acks + 10);
        long kill = System.nanoTime();
        g.kill9(leader);
        long[] elected = {-1};
        String[] next = {null};
        Await.until("a surviving replica names a new leader after kill " + i, Duration.ofSeconds(60), () -> {
            for (GroupProcesses.Node n : g.replicas()) {
                if (n != leader) {
                    String l = g.leaderSeenBy(n);
                    if (l != null && !l.equals(leader.name())) {
                        elected[0] = System.nanoTime();
                        next[0] = l;
                        return true;
                    }
                }
            }
            return false;
        });
        Await.until("a probe put acknowledged after kill " + i + " (last failure: " + load.lastFailure() + ")",
                Duration.ofSeconds(60), () -> load.writeGapNanos(kill) >= 0);
        long gap = load.writeGapNanos(kill);
        Kill k = new Kill(leader.name(), next[0], (elected[0] - kill) / 1e6, gap / 1e6, load.probeFailuresSince(kill),
                load.probeTrace(kill, kill + gap));
        g.launch(leader);
        return k;
    }

    private Map<String, Object> killOnce(GroupProcesses g, WriteLoad load, int i, List<Double> leaderMillis, List<Double> gapMillis,
            PrintWriter out) throws Exception {
        Kill k = killLeader(g, load, i);
        leaderMillis.add(k.newLeaderMillis());
        gapMillis.add(k.writeGapMillis());
        out.printf(Locale.ROOT, "kill %2d: leader %s killed; %s leads after %5.0f ms; write gap %5.0f ms; probe failures since %d%n",
                i, k.killed(), k.newLeader(), k.newLeaderMillis(), k.writeGapMillis(), k.probeFailures());
        if (trace) {
            out.printf(Locale.ROOT, "  the probe client's attempts from the kill to its first acknowledged put:%n");
            k.trace().forEach(l -> out.println("    " + l));
        }
        out.flush();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("killed", k.killed());
        r.put("newLeader", k.newLeader());
        r.put("newLeaderMillis", Math.round(k.newLeaderMillis()));
        r.put("writeGapMillis", Math.round(k.writeGapMillis()));
        r.put("probeFailures", k.probeFailures());
        return r;
    }

    static Map<String, Object> stats(List<Double> xs) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("median", Math.round(median(xs)));
        m.put("max", Math.round(max(xs)));
        m.put("all", xs.stream().map(Math::round).toList());
        return m;
    }

    static double median(List<Double> xs) {
        if (xs.isEmpty()) {
            return Double.NaN;
        }
        List<Double> s = xs.stream().sorted().toList();
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    static double max(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    private static Path findJar() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path j = p.resolve("cli/target/hayloft.jar");
            if (Files.isRegularFile(j)) {
                return j;
            }
        }
        return null;
    }
}
