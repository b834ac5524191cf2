package io.hayloft.cli.raid;

import io.hayloft.cli.ec.Progress;
import io.hayloft.common.wire.StripeMap;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidNode;
import java.io.IOException;

/**
 * Drives an encode's progress bar from its protocol steps: at {@code begun} the planned stripe map
 * gives the volume's size, each {@code stripe-N} advances the bar by one stripe of data. Not
 * thread-safe: one encode job reports from one thread.
 */
public final class EncodeProgress implements Checkpoints, AutoCloseable {

    private final RaidNode node;
    private final int volume;
    private final Progress.Factory bars;
    private Progress bar = Progress.none();
    private long size;
    private long perStripe;
    private long shown;

    public EncodeProgress(RaidNode node, int volume, Progress.Factory bars) {
        this.node = node;
        this.volume = volume;
        this.bars = bars;
    }

    @Override
    public void reached(String step) {
        if (step.equals("begun")) {
            try {
                StripeMap m = node.cluster().stripeMap(volume);
                size = m.volumeBytes();
                perStripe = m.k() * m.blockSize();
                bar = bars.start("encode v" + volume, size);
            } catch (IOException e) {
                bar = Progress.none(); // no plan to measure against: no bar, the encode goes on
            }
        } else if (step.startsWith("stripe-") && perStripe > 0) {
            long done = Math.min(size, (Long.parseLong(step.substring("stripe-".length())) + 1) * perStripe);
            bar.add(done - shown);
            shown = done;
        }
    }

    @Override
    public void close() {
        bar.close();
    }
}
