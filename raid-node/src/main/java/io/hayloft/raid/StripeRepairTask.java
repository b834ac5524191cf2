package io.hayloft.raid;

import java.io.IOException;
import java.io.Serializable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds the damaged blocks of one stripe ({@link BlockFixer#repair}) wherever a {@link JobRunner}
 * runs it: the task carries the configuration and the {@link BlockFixer.Damage}, and re-reads the
 * stripe map and the stores' states from the directory where it runs. A failure is returned, not
 * thrown, so one lost stripe does not stop the repair of the others. Idempotent: a repeat after the
 * block was replaced finds the old name gone and fails its compare-and-set; the orphan sweep removes
 * what it uploaded. Its block replacement carries the raid lease epoch of the job that made it, so a
 * task that runs after that job's lease passed to another raid-node changes no stripe map.
 *
 * <p>The per-store read budget ({@code repairBytesPerSecondPerStore}) is enforced per task here, not
 * across the job: on an engine, bound the number of concurrent tasks instead (executors × cores).
 *
 * <p>Immutable; thread-safe.
 */
public final class StripeRepairTask implements RaidTask<StripeRepairTask.Outcome> {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(StripeRepairTask.class);

    /** What repairing one stripe did; {@code failure} is null when it succeeded. */
    public record Outcome(int volume, int stripe, int blocks, long bytesRead, long bytesWritten, String failure)
            implements Serializable {
    }

    private final RaidConfig config;
    private final BlockFixer.Damage damage;
    /** The raid lease epoch of the job that made the task, sent with its block replacement; 0: unfenced. */
    private final long epoch;

    public StripeRepairTask(RaidConfig config, BlockFixer.Damage damage) {
        this(config, damage, 0);
    }

    /** @param epoch the raid lease epoch its replacement is fenced by (the driver's lease), 0 for none */
    public StripeRepairTask(RaidConfig config, BlockFixer.Damage damage, long epoch) {
        this.config = config;
        this.damage = damage;
        this.epoch = epoch;
    }

    @Override
    public Outcome call() {
        BlockFixer fixer = new BlockFixer(StripeEncodeTask.cluster(config), config).fencedAt(epoch);
        try {
            long read = fixer.repair(damage);
            return new Outcome(damage.volume(), damage.stripe(), damage.units().length, read, fixer.bytesWritten(), null);
        } catch (IOException | RuntimeException e) {
            LOG.warn("repair of volume {} stripe {} failed: {}", damage.volume(), damage.stripe(), e.toString());
            return new Outcome(damage.volume(), damage.stripe(), 0, fixer.bytesRead(), fixer.bytesWritten(),
                    "volume " + damage.volume() + " stripe " + damage.stripe() + ": " + e.getMessage());
        }
    }
}
