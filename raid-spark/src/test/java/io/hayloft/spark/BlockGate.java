package io.hayloft.spark;

import io.hayloft.serverkit.io.Disk;
import io.hayloft.serverkit.io.ForwardingDisk;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * A gate in front of the real disks of a test's stores: while it is {@link #close closed}, creating a
 * stripe block file ({@code v<vol>-<job>-s<s>-u<u>...}) waits for it to {@link #open}; every other file
 * operation goes straight to {@link Disk#REAL}. It holds every stripe task of an encode at its first
 * upload, so a test can kill a Spark worker while a task is certainly running on it, whatever the
 * machine's speed. Thread-safe.
 */
final class BlockGate {

    private static final Pattern STRIPE_BLOCK = Pattern.compile("v[0-9]+-[0-9a-f]{8}-s[0-9]+-u[0-9]+.*");
    private static final long MAX_HOLD_SECONDS = 300;

    private volatile CountDownLatch latch = new CountDownLatch(0);
    private final AtomicInteger held = new AtomicInteger();

    /** From now on, stripe block creates wait. */
    void close() {
        latch = new CountDownLatch(1);
    }

    /** Lets every waiting and later create through. */
    void open() {
        latch.countDown();
    }

    /** Creates waiting at the gate right now. */
    int held() {
        return held.get();
    }

    /** A disk for one store: {@link Disk#REAL} behind this gate. */
    Disk disk() {
        return new Gated();
    }

    private void pass(Path file, StandardOpenOption... options) throws IOException {
        if (!List.of(options).contains(StandardOpenOption.CREATE_NEW) && !List.of(options).contains(StandardOpenOption.CREATE)) {
            return;
        }
        if (!STRIPE_BLOCK.matcher(file.getFileName().toString()).matches()) {
            return;
        }
        CountDownLatch l = latch;
        if (l.getCount() == 0) {
            return;
        }
        held.incrementAndGet();
        try {
            if (!l.await(MAX_HOLD_SECONDS, TimeUnit.SECONDS)) {
                throw new IOException("test gate held " + file.getFileName() + " for " + MAX_HOLD_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted at the test gate");
        } finally {
            held.decrementAndGet();
        }
    }

    /** Disk.REAL with the gate before every open; no writes around the page cache, so that every block write opens. */
    private final class Gated extends ForwardingDisk {
        Gated() {
            super(REAL);
        }

        @Override
        public FileChannel open(Path file, StandardOpenOption... options) throws IOException {
            pass(file, options);
            return super.open(file, options);
        }

        @Override
        public Direct openDirect(Path file) {
            return null;
        }
    }
}
