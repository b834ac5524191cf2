package io.hayloft.cli.raid;

import io.hayloft.cli.ec.Progress;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidNode;
import java.io.IOException;

/**
 * Drives an encode's progress bar from its protocol steps: at {@code begun} the planned stripe map
 * gives the volume's size and stripe count, each {@code stripe-N} (any order) advances the bar by that
 * stripe's data bytes and the count of stripes done ("3/8 stripes"); the label names where stripes are
 * encoded ({@code on stores} or {@code on raid-node}). Not thread-safe: one encode job reports from one thread.
 */
public final class EncodeProgress implements Checkpoints, AutoCloseable {

    private final RaidNode node;
    private final int volume;
    private final Progress.Factory bars;
    private Progress bar = Progress.none();
    private long size;
    private long perStripe;
    private int stripes;
    private int stripesDone;
    private final String where;

    public EncodeProgress(RaidNode node, int volume, Progress.Factory bars) {
        this(node, volume, bars, null);
    }

    /** @param encodeAt {@code store} or {@code raid-node} (RaidConfig.encodeAt), shown in the label; null: not shown */
    public EncodeProgress(RaidNode node, int volume, Progress.Factory bars, String encodeAt) {
        this.node = node;
        this.volume = volume;
        this.bars = bars;
        this.where = encodeAt == null ? "" : " on " + ("store".equals(encodeAt) ? "stores" : encodeAt);
    }

    @Override
    public void reached(String step) {
        if (step.equals("begun")) {
            try {
                StripeMap m = node.cluster().stripeMap(volume);
                size = m.volumeBytes();
                perStripe = m.k() * m.blockSize();
                stripes = m.stripes().size();
                bar = bars.start("encode v" + volume + where, size);
                bar.detail("0/" + stripes + " stripes");
            } catch (IOException e) {
                bar = Progress.none(); // no plan to measure against: no bar, the encode goes on
            }
        } else if (step.startsWith("stripe-") && perStripe > 0) {
            long index = Long.parseLong(step.substring("stripe-".length()));
            long bytes = Math.max(0, Math.min(size, (index + 1) * perStripe) - index * perStripe);
            stripesDone++;
            bar.detail(stripesDone + "/" + stripes + " stripes");
            bar.add(bytes);
        }
    }

    @Override
    public void close() {
        bar.close();
    }
}
