package io.hayloft.cli.chaos;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the checker did: operations and faults by kind, needles and reads checked, losses found.
 * Summed over schedules with {@link #add}.
 *
 * <p>Not thread-safe: one checker thread owns it.
 */
public final class ChaosStats {
    final Map<String, Long> ops = new TreeMap<>();
    final Map<String, Long> faults = new TreeMap<>();
    final Map<String, Long> codecs = new TreeMap<>();
    long schedules;
    long steps;
    long operations;
    long violations;
    long photosChecked;
    long needlesChecked;
    long readsChecked;
    long wrongCookieReads;
    long fullChecks;
    long inDoubt;
    long losses;
    long nanos;
    long bytesLost;
    long tornWrites;

    void op(String kind) {
        ops.merge(kind, 1L, Long::sum);
    }

    void fault(String kind) {
        faults.merge(kind, 1L, Long::sum);
    }

    void codec(String codec) {
        codecs.merge(codec, 1L, Long::sum);
    }

    public Map<String, Long> ops() {
        return Map.copyOf(ops);
    }

    public Map<String, Long> faults() {
        return Map.copyOf(faults);
    }

    /** Encodes (and reclaims) committed per codec. */
    public Map<String, Long> codecs() {
        return Map.copyOf(codecs);
    }

    public long schedules() {
        return schedules;
    }

    public long steps() {
        return steps;
    }

    /** Photos (keys) written and checked at the end of their schedule. */
    public long photosChecked() {
        return photosChecked;
    }

    /** Needles (key, alternate) written and checked at the end of their schedule. */
    public long needlesChecked() {
        return needlesChecked;
    }

    /** Reads through the client compared against the model. */
    public long readsChecked() {
        return readsChecked;
    }

    /** Bytes written but never fsynced that the simulated disks forgot at power cuts. */
    public long bytesLost() {
        return bytesLost;
    }

    public long tornWrites() {
        return tornWrites;
    }

    /** Operations run: steps of a sequential schedule; client operations and background jobs of a concurrent one. */
    public long operations() {
        return operations;
    }

    /** Histories and progress that broke the model (losses included). */
    public long violations() {
        return violations;
    }

    public long losses() {
        return losses;
    }

    public long nanos() {
        return nanos;
    }

    public long faultCount() {
        return faults.values().stream().mapToLong(Long::longValue).sum();
    }

    void add(ChaosStats o) {
        o.ops.forEach((k, v) -> ops.merge(k, v, Long::sum));
        o.faults.forEach((k, v) -> faults.merge(k, v, Long::sum));
        o.codecs.forEach((k, v) -> codecs.merge(k, v, Long::sum));
        schedules += o.schedules;
        steps += o.steps;
        operations += o.operations;
        violations += o.violations;
        photosChecked += o.photosChecked;
        needlesChecked += o.needlesChecked;
        readsChecked += o.readsChecked;
        wrongCookieReads += o.wrongCookieReads;
        fullChecks += o.fullChecks;
        inDoubt += o.inDoubt;
        losses += o.losses;
        bytesLost += o.bytesLost;
        tornWrites += o.tornWrites;
        nanos += o.nanos;
    }

    /** A summary table, one figure per line. */
    public String table() {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "schedules", schedules));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "steps", steps));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "operations", operations));
        ops.forEach((k, v) -> b.append(String.format(Locale.ROOT, "%-28s %d%n", "op " + k, v)));
        faults.forEach((k, v) -> b.append(String.format(Locale.ROOT, "%-28s %d%n", "fault " + k, v)));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "faults total", faultCount()));
        codecs.forEach((k, v) -> b.append(String.format(Locale.ROOT, "%-28s %d%n", "coded with " + k, v)));
        if (bytesLost > 0 || tornWrites > 0 || faults.containsKey("power-cut")) {
            b.append(String.format(Locale.ROOT, "%-28s %d%n", "unsynced bytes lost", bytesLost));
            b.append(String.format(Locale.ROOT, "%-28s %d%n", "torn writes", tornWrites));
        }
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "photos checked", photosChecked));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "needles checked", needlesChecked));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "in-doubt needles", inDoubt));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "full checks", fullChecks));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "reads checked", readsChecked));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "wrong-cookie reads", wrongCookieReads));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "losses found", losses));
        b.append(String.format(Locale.ROOT, "%-28s %d%n", "violations", violations));
        b.append(String.format(Locale.ROOT, "%-28s %.1f s%n", "wall time", nanos / 1e9));
        return b.toString();
    }
}
