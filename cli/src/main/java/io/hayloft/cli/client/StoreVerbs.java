package io.hayloft.cli.client;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.ec.Progress;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.DrainJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidLease;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hayloft stores fail|restore|drain ID}: an operator takes a store out of service, brings it
 * back, or moves everything off it (docs/raid.md "Drain"). Stateless; one command per process.
 */
final class StoreVerbs {
    private StoreVerbs() {
    }

    /** How long the drain's raid lease lasts without renewal (renewed every third of it). */
    static final long LEASE_TTL_MILLIS = 60_000;

    @Command(name = "fail", mixinStandardHelpOptions = true,
            description = "Mark a store FAILED and its writable volumes read-only (as the health checker would).")
    static final class Fail extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "store id")
        String store;
        @Option(names = "--reason", paramLabel = "TEXT", description = "why, recorded as the store's last error")
        String reason;

        @Override
        int run(Cluster cluster, PrintWriter out) throws Exception {
            StoreInfo s = cluster.failStore(store, reason);
            out.printf("store %s %s: %s%n", s.id(), s.state(), s.lastError());
            return 0;
        }
    }

    @Command(name = "restore", mixinStandardHelpOptions = true,
            description = "Bring a FAILED, DRAINING or DRAINED store back UP (its volumes stay read-only).")
    static final class Restore extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "store id")
        String store;

        @Override
        int run(Cluster cluster, PrintWriter out) throws Exception {
            StoreInfo s = cluster.restoreStore(store);
            out.printf("store %s %s%n", s.id(), s.state());
            return 0;
        }
    }

    @Command(name = "drain", mixinStandardHelpOptions = true, description = {
            "Move every replica, block and needle-index copy off a store, then mark it DRAINED.",
            "Takes the cluster's raid lease (refused beside a raid daemon); resumable: run it again after a crash or Ctrl-C."})
    static final class Drain extends AdminCommand {
        @Parameters(paramLabel = "ID", description = "store id")
        String store;
        @Option(names = "--progress", description = "Show a progress bar on stderr even when it is not a terminal.")
        boolean progress;
        @Option(names = "--spool-dir", paramLabel = "DIR", description = "spool files of blocks rebuilt when the store is down (default: system temp)")
        String spoolDir;

        @Override
        int run(Cluster cluster, PrintWriter out) throws Exception {
            if (cluster.storeInfos().stream().noneMatch(s -> store.equals(s.id()))) {
                spec.commandLine().getErr().println("hayloft: no store " + store);
                return Hayloft.EXIT_USAGE;
            }
            RaidConfig config = new RaidConfig();
            config.directory = String.join(",", options.directories());
            config.adminToken = options.adminToken;
            config.requestTimeoutMillis = options.timeoutSeconds * 1000L;
            config.spoolDir = spoolDir;
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config, runner);
                try (RaidLease lease = RaidLease.acquire(node.cluster(), RaidLease.commandHolder(), LEASE_TTL_MILLIS)) {
                    // Ctrl-C: give the lease back, so the rerun that resumes the drain need not wait for it to lapse
                    Thread release = new Thread(lease::close, "drain-lease-release");
                    Runtime.getRuntime().addShutdownHook(release);
                    try {
                        return drain(node, out);
                    } finally {
                        try {
                            Runtime.getRuntime().removeShutdownHook(release);
                        } catch (IllegalStateException shuttingDown) {
                            // the hook runs
                        }
                    }
                }
            }
        }

        private int drain(RaidNode node, PrintWriter out) throws IOException {
            node.recover();
            Bar bar = new Bar(Progress.Factory.of(spec.commandLine().getErr(), progress), store);
            DrainJob.Result r;
            try {
                r = node.drain(store, bar);
            } finally {
                bar.close();
            }
            out.printf(Locale.ROOT, "store %s DRAINED%s: %d replicas moved, %d blocks copied, %d rebuilt, %d index copies moved, "
                            + "%d bytes in %.2f s%n", r.store(), r.storeWasDown() ? " (it was down)" : "", r.replicasMoved(),
                    r.blocksCopied(), r.blocksRebuilt(), r.indexesMoved(), r.bytes(), r.nanos() / 1e9);
            return 0;
        }
    }

    /** The drain's progress bar, by bytes moved. Not thread-safe: the drain reports from one thread. */
    private static final class Bar implements DrainJob.Listener, AutoCloseable {
        private final Progress.Factory bars;
        private final String store;
        private Progress bar = Progress.none();

        Bar(Progress.Factory bars, String store) {
            this.bars = bars;
            this.store = store;
        }

        @Override
        public void planned(int items, long bytes) {
            bar = bars.start("drain " + store + " (" + items + " items)", Math.max(1, bytes));
        }

        @Override
        public void moved(String what, long bytes) {
            bar.add(bytes);
        }

        @Override
        public void close() {
            bar.close();
        }
    }
}
