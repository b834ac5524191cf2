package io.hayloft.cli.chaos;

import java.nio.file.Path;
import java.util.List;

/**
 * How to run the life-cycle checker: {@code schedules} schedules of {@code steps} steps each, the
 * first with seed {@code seed}, the next with {@code seed + 1} and so on, each against a fresh
 * embedded cluster of {@code stores} stores under {@code dataDir}.
 *
 * @param seed        seed of the first schedule
 * @param steps       steps per schedule
 * @param schedules   schedules to run
 * @param stores      store servers per cluster (at least k + r + 2, so a stripe fits with one store down and one repair target)
 * @param codecs      codecs encodes choose from ({@code rs}, {@code hh-xor}, {@code hh-xor+}, {@code hh-nonxor})
 * @param k           data blocks per stripe
 * @param r           parity blocks per stripe (Hitchhiker needs at least 2)
 * @param powerCuts   inject power cuts of a store's disk (needs the simulated disk)
 * @param volumeLimit bytes at which a volume is full
 * @param sample      needles read back after each step besides those the step touched
 * @param dataDir     where the clusters' data go (one sub-directory per schedule)
 * @param clients     client threads: 1 runs the sequential checker ({@link ChaosRun}); more run a concurrent
 *                    schedule ({@link ConcurrentChaosRun}) where {@code steps} is the operations of each client
 * @param directories directory replicas: 1, today's single directory; 3 (or 5), a Raft group of in-process
 *                    replicas ({@link DirectoryGroup}) with leader kills and follower wipes among the faults
 *                    (concurrent schedules only)
 * @param directoryGroups how the group of {@code directories > 1} replicas is started: null for in-process
 *                    replicas ({@link DirectoryGroup}); e.g. the benchmarks' replicas as processes on simulated
 *                    hosts, with {@code kill -9} and partitions among the faults
 * @param minFaults   faults each concurrent schedule injects at least, going on after its clients are done
 *                    when they finish sooner (0: the faults stop with the clients)
 *
 * <p>Immutable, hence thread-safe.
 */
public record ChaosOptions(long seed, int steps, int schedules, int stores, List<String> codecs, int k, int r,
                           boolean powerCuts, long volumeLimit, int sample, Path dataDir, int clients,
                           int directories, ReplicaGroup.Factory directoryGroups, int minFaults) {

    public static final List<String> ALL_CODECS = List.of("rs", "hh-xor", "hh-xor+", "hh-nonxor");

    public ChaosOptions {
        if (steps < 1 || schedules < 1) {
            throw new IllegalArgumentException("steps and schedules must be >= 1, were " + steps + " and " + schedules);
        }
        if (r < 2 || k < 2) {
            throw new IllegalArgumentException("k and r must be >= 2 (Hitchhiker needs r >= 2), were k=" + k + " r=" + r);
        }
        if (stores < k + r + 2) {
            throw new IllegalArgumentException("stores must be >= k + r + 2 = " + (k + r + 2) + ", was " + stores);
        }
        codecs = List.copyOf(codecs);
        if (codecs.isEmpty()) {
            throw new IllegalArgumentException("at least one codec is needed");
        }
        for (String c : codecs) {
            if (!ALL_CODECS.contains(c)) {
                throw new IllegalArgumentException("unknown codec '" + c + "': use " + ALL_CODECS);
            }
        }
        if (volumeLimit < (1 << 20)) {
            throw new IllegalArgumentException("volume limit must be >= 1 MiB, was " + volumeLimit);
        }
        if (clients < 1 || clients > 64) {
            throw new IllegalArgumentException("clients must be in 1..64, was " + clients);
        }
        if (directories != 1 && directories != 3 && directories != 5) {
            throw new IllegalArgumentException("directories must be 1, 3 or 5, was " + directories);
        }
        if (directories > 1 && clients < 2) {
            throw new IllegalArgumentException("--directories > 1 needs concurrent schedules (--clients >= 2)");
        }
        if (dataDir == null) {
            throw new IllegalArgumentException("a data directory is needed");
        }
        if (minFaults < 0) {
            throw new IllegalArgumentException("minFaults must be >= 0, was " + minFaults);
        }
        if (directoryGroups != null && directories < 2) {
            throw new IllegalArgumentException("a directory group (" + directoryGroups.flag() + ") needs --directories 3 (or 5)");
        }
    }

    /** Replicas of a directory group ({@code directories > 1}) in this process ({@link DirectoryGroup}). */
    public ChaosOptions(long seed, int steps, int schedules, int stores, List<String> codecs, int k, int r, boolean powerCuts,
                        long volumeLimit, int sample, Path dataDir, int clients, int directories) {
        this(seed, steps, schedules, stores, codecs, k, r, powerCuts, volumeLimit, sample, dataDir, clients, directories, null, 0);
    }

    /** 8 stores, every codec at (4, 2), 2 MiB volumes, 8 needles sampled per step, no power cuts. */
    public static ChaosOptions of(long seed, int steps, Path dataDir) {
        return new ChaosOptions(seed, steps, 1, 8, ALL_CODECS, 4, 2, false, 2L << 20, 8, dataDir, 1, 1);
    }

    public ChaosOptions withSchedules(int n) {
        return new ChaosOptions(seed, steps, n, stores, codecs, k, r, powerCuts, volumeLimit, sample, dataDir, clients, directories, directoryGroups, minFaults);
    }

    public ChaosOptions withStores(int n) {
        return new ChaosOptions(seed, steps, schedules, n, codecs, k, r, powerCuts, volumeLimit, sample, dataDir, clients, directories, directoryGroups, minFaults);
    }

    public ChaosOptions withCodecs(List<String> c) {
        return new ChaosOptions(seed, steps, schedules, stores, c, k, r, powerCuts, volumeLimit, sample, dataDir, clients, directories, directoryGroups, minFaults);
    }

    public ChaosOptions withPowerCuts(boolean on) {
        return new ChaosOptions(seed, steps, schedules, stores, codecs, k, r, on, volumeLimit, sample, dataDir, clients, directories, directoryGroups, minFaults);
    }

    public ChaosOptions withClients(int n) {
        return new ChaosOptions(seed, steps, schedules, stores, codecs, k, r, powerCuts, volumeLimit, sample, dataDir, n, directories, directoryGroups, minFaults);
    }

    public ChaosOptions withDirectories(int n) {
        return new ChaosOptions(seed, steps, schedules, stores, codecs, k, r, powerCuts, volumeLimit, sample, dataDir, clients, n, directoryGroups, minFaults);
    }

    /** With the directory group started by {@code f} (null: in-process replicas). */
    public ChaosOptions withDirectoryGroups(ReplicaGroup.Factory f) {
        return new ChaosOptions(seed, steps, schedules, stores, codecs, k, r, powerCuts, volumeLimit, sample, dataDir, clients, directories, f, minFaults);
    }

    /**
     * With at least {@code n} faults injected in each concurrent schedule: when the clients are done
     * sooner, the faults go on (paced as ever) until {@code n} were injected, then the quiet phase runs.
     * A short schedule on a fast machine then still sees the faults its seed draws first.
     */
    public ChaosOptions withMinFaults(int n) {
        return new ChaosOptions(seed, steps, schedules, stores, codecs, k, r, powerCuts, volumeLimit, sample, dataDir, clients, directories, directoryGroups, n);
    }

    /** The command line that replays schedule {@code scheduleSeed} alone. */
    public String replayCommand(long scheduleSeed) {
        return "./hayloft bench chaos --seed " + scheduleSeed + " --steps " + steps + " --schedules 1 --stores " + stores
                + " --codecs " + String.join(",", codecs) + " -k " + k + " -r " + r + (powerCuts ? " --power-cuts" : "")
                + (volumeLimit != 2L << 20 ? " --volume-limit " + volumeLimit : "") + (sample != 8 ? " --sample " + sample : "") + (clients != 1 ? " --clients " + clients : "")
                + (directories != 1 ? " --directories " + directories : "") + (minFaults > 0 ? " --min-faults " + minFaults : "")
                + (directoryGroups != null && !directoryGroups.flag().isEmpty() ? " " + directoryGroups.flag() : "");
    }
}
