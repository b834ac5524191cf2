package io.hayloft.serverkit.io;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * An in-memory {@link Disk} that loses, at a simulated {@link #powerCut}, everything no completed
 * fsync covered: what {@code kill -9} never shows, because the page cache survives a process crash.
 *
 * <p>The model:
 * <ul>
 *   <li>A file is an inode with its <em>current</em> bytes (what reads, sizes and listings see) and
 *       its <em>durable</em> bytes, plus the list of writes and truncates applied since its last
 *       {@link FileChannel#force force}. {@code force} (either flag) makes the inode's current
 *       bytes durable; it does not make its name durable.</li>
 *   <li>Names map to inodes per directory, in a current and a durable namespace. A create,
 *       rename or delete changes the current namespace; {@link #syncDirectory syncDirectory(dir)}
 *       copies the current entries of {@code dir} (and only of {@code dir}) into the durable
 *       namespace. A rename across directories therefore needs both parents synced; with only the
 *       target synced, the inode may come back under both names. Directories themselves are
 *       durable as soon as {@link #createDirectories} returns and are never removed.</li>
 *   <li>{@link #powerCut}: every channel open at the cut dies (further calls throw
 *       {@code IOException("simulated power cut")}; {@code close()} succeeds quietly), and so does
 *       every {@link #session() session} handed out before it. The namespace reverts to the
 *       durable namespace; each surviving inode reverts to its durable bytes plus a random prefix
 *       (chosen by the seed) of its unsynced operations, in order; the last operation replayed,
 *       if a write, may be torn at a random byte, and when a torn write extended the file its
 *       length may cover the whole write with zeros past the tear (metadata written, data not: the
 *       zero-filled tail of real file systems). What was replayed becomes durable. Then the disk is
 *       usable again, as a restarted machine sees it.</li>
 *   <li>Writes are not reordered within a file: if an unsynced write survives, every unsynced
 *       write before it in the same file survived. Files are independent of one another.</li>
 * </ul>
 * Paths are normalised to absolute paths of the default file system; nothing touches the real
 * disk. Files are limited to 1 GiB each. {@link #open} honours {@code CREATE}, {@code CREATE_NEW},
 * {@code TRUNCATE_EXISTING}, {@code READ}, {@code WRITE}, {@code APPEND} and {@code DELETE_ON_CLOSE}
 * (the name goes at close, undurably, unless a cut killed the channel first) and ignores the rest;
 * channels do not {@code map}; locks are granted at once and exclude nothing.
 * {@link #deleteIfExists} also removes an empty directory (at once, like its creation).
 *
 * <p>Thread-safe: every operation holds the disk's monitor. A hook set with {@link #beforeForce}
 * runs outside it, on the forcing thread, so a test can order events (or cut the power) exactly
 * before a given fsync without sleeping.
 */
public final class SimulatedDisk implements Disk {
    private static final int MAX_FILE = 1 << 30;

    /** One unsynced write ({@code bytes != null}) or truncate ({@code bytes == null}) of an inode. */
    record Op(long pos, byte[] bytes) {
        long length() {
            return bytes == null ? 0 : bytes.length;
        }
    }

    static final class Inode {
        byte[] data = new byte[0];
        int length;
        byte[] durable = new byte[0];
        final List<Op> unsynced = new ArrayList<>();

        void write(long pos, byte[] b) throws IOException {
            long end = pos + b.length;
            if (end > MAX_FILE) {
                throw new FileSystemException("simulated disk: file would exceed " + MAX_FILE + " bytes");
            }
            if (end > data.length) {
                data = Arrays.copyOf(data, (int) Math.max(end, Math.min(MAX_FILE, data.length * 2L)));
            }
            if (pos > length) {
                Arrays.fill(data, length, (int) pos, (byte) 0);
            }
            System.arraycopy(b, 0, data, (int) pos, b.length);
            length = (int) Math.max(length, end);
        }

        void truncate(long size) {
            if (size < length) {
                length = (int) size;
            }
        }

        void makeDurable() {
            durable = Arrays.copyOf(data, length);
            unsynced.clear();
        }
    }

    private final SplittableRandom random;
    private Map<Path, Inode> names = new HashMap<>();
    private final Map<Path, Inode> durableNames = new HashMap<>();
    private final Set<Path> dirs = new HashSet<>();
    private long generation;
    private long powerCuts;
    private long bytesLost;
    private long tornWrites;
    private volatile Consumer<Path> forceHook = p -> { };

    public SimulatedDisk(long seed) {
        this.random = new SplittableRandom(seed);
        dirs.add(Path.of("").toAbsolutePath().getRoot());
    }

    private static Path norm(Path p) {
        return p.toAbsolutePath().normalize();
    }

    /** The current generation: bumped by every power cut. */
    private synchronized long generation() {
        return generation;
    }

    /**
     * Runs {@code hook} before every {@code force} of a file (with the file's path) and every
     * {@link #syncDirectory} (with the directory's path), on the calling thread, outside the disk's
     * lock: a test can cut the power there, or run another step first. {@code null} removes it.
     */
    public void beforeForce(Consumer<Path> hook) {
        forceHook = hook == null ? p -> { } : hook;
    }

    /**
     * A handle for one process (one server instance): it behaves like this disk until the next
     * {@link #powerCut}, after which every call on it throws {@code IOException("simulated power
     * cut")} ({@link #exists} an {@link UncheckedIOException}), so a process that was "killed" by the
     * cut cannot change what the restarted machine sees.
     */
    @Override
    public Disk session() {
        return new Session(generation());
    }

    @Override
    public FileChannel open(Path file, StandardOpenOption... options) throws IOException {
        return open(file, generation(), options);
    }

    private synchronized FileChannel open(Path file, long gen, StandardOpenOption... options) throws IOException {
        checkGeneration(gen);
        Path p = norm(file);
        Set<StandardOpenOption> o = options.length == 0 ? Set.of() : Set.of(options);
        boolean append = o.contains(StandardOpenOption.APPEND);
        boolean write = append || o.contains(StandardOpenOption.WRITE);
        boolean read = o.contains(StandardOpenOption.READ) || !write;
        if (dirs.contains(p)) {
            throw new FileSystemException(p + ": is a directory");
        }
        if (p.getParent() == null || !dirs.contains(p.getParent())) {
            throw new NoSuchFileException(p.toString(), null, "no such directory");
        }
        Inode inode = names.get(p);
        if (inode != null && write && o.contains(StandardOpenOption.CREATE_NEW)) {
            throw new FileAlreadyExistsException(p.toString());
        }
        if (inode == null) {
            if (!write || !(o.contains(StandardOpenOption.CREATE) || o.contains(StandardOpenOption.CREATE_NEW))) {
                throw new NoSuchFileException(p.toString());
            }
            inode = new Inode();
            names.put(p, inode);
        } else if (write && o.contains(StandardOpenOption.TRUNCATE_EXISTING) && inode.length > 0) {
            inode.truncate(0);
            inode.unsynced.add(new Op(0, null));
        }
        return new SimulatedChannel(this, p, inode, gen, read, write, append, o.contains(StandardOpenOption.DELETE_ON_CLOSE));
    }

    @Override
    public void move(Path from, Path to) throws IOException {
        move(from, to, generation());
    }

    private synchronized void move(Path from, Path to, long gen) throws IOException {
        checkGeneration(gen);
        Path f = norm(from);
        Path t = norm(to);
        Inode inode = names.get(f);
        if (inode == null) {
            throw new NoSuchFileException(f.toString());
        }
        if (!dirs.contains(t.getParent())) {
            throw new NoSuchFileException(t.toString(), null, "no such directory");
        }
        names.remove(f);
        names.put(t, inode);
    }

    @Override
    public boolean deleteIfExists(Path file) throws IOException {
        return deleteIfExists(file, generation());
    }

    private synchronized boolean deleteIfExists(Path file, long gen) throws IOException {
        checkGeneration(gen);
        Path p = norm(file);
        if (dirs.contains(p) && p.getParent() != null) {
            for (Path q : names.keySet()) {
                if (p.equals(q.getParent())) {
                    throw new DirectoryNotEmptyException(p.toString());
                }
            }
            for (Path q : dirs) {
                if (p.equals(q.getParent())) {
                    throw new DirectoryNotEmptyException(p.toString());
                }
            }
            dirs.remove(p); // an empty directory: gone at once, like its creation
            return true;
        }
        return names.remove(p) != null;
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        syncDirectory(dir, generation());
    }

    private void syncDirectory(Path dir, long gen) throws IOException {
        synchronized (this) {
            checkGeneration(gen);
        }
        forceHook.accept(norm(dir));
        syncDirectoryLocked(dir, gen);
    }

    private synchronized void syncDirectoryLocked(Path dir, long gen) throws IOException {
        checkGeneration(gen);
        Path d = norm(dir);
        if (!dirs.contains(d)) {
            throw new NoSuchFileException(d.toString());
        }
        durableNames.keySet().removeIf(p -> d.equals(p.getParent()));
        for (Map.Entry<Path, Inode> e : names.entrySet()) {
            if (d.equals(e.getKey().getParent())) {
                durableNames.put(e.getKey(), e.getValue());
            }
        }
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        createDirectories(dir, generation());
    }

    private synchronized void createDirectories(Path dir, long gen) throws IOException {
        checkGeneration(gen);
        Path d = norm(dir);
        for (Path p = d; p != null; p = p.getParent()) {
            if (names.containsKey(p)) {
                throw new FileAlreadyExistsException(p.toString(), null, "a file, not a directory");
            }
        }
        for (Path p = d; p != null; p = p.getParent()) {
            dirs.add(p);
        }
    }

    @Override
    public synchronized boolean exists(Path file) {
        Path p = norm(file);
        return names.containsKey(p) || dirs.contains(p);
    }

    @Override
    public synchronized long size(Path file) throws IOException {
        Inode inode = names.get(norm(file));
        if (inode == null) {
            throw new NoSuchFileException(file.toString());
        }
        return inode.length;
    }

    @Override
    public synchronized List<String> list(Path dir) {
        Path d = norm(dir);
        List<String> out = new ArrayList<>();
        for (Path p : names.keySet()) {
            if (d.equals(p.getParent())) {
                out.add(p.getFileName().toString());
            }
        }
        Collections.sort(out);
        return out;
    }

    @Override
    public long usableSpace(Path dir) {
        return Long.MAX_VALUE;
    }

    @Override
    public long totalSpace(Path dir) {
        return Long.MAX_VALUE;
    }

    /**
     * Cuts the power: see the class comment. Every open channel and session dies; files and
     * names revert to what was durable, plus a random prefix of each file's unsynced operations.
     */
    public synchronized void powerCut() {
        generation++;
        powerCuts++;
        Map<Inode, Boolean> all = new IdentityHashMap<>();
        for (Inode i : names.values()) {
            all.put(i, Boolean.TRUE);
        }
        for (Inode i : durableNames.values()) {
            all.put(i, Boolean.TRUE);
        }
        for (Inode i : all.keySet()) {
            revert(i);
        }
        names = new HashMap<>(durableNames);
    }

    private void revert(Inode inode) {
        List<Op> ops = inode.unsynced;
        int keep = ops.isEmpty() ? 0 : random.nextInt(ops.size() + 1);
        inode.data = Arrays.copyOf(inode.durable, inode.durable.length);
        inode.length = inode.durable.length;
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (i >= keep) {
                bytesLost += op.length();
                continue;
            }
            try {
                if (op.bytes() == null) {
                    inode.truncate(op.pos());
                } else if (i == keep - 1 && op.bytes().length > 0 && random.nextBoolean()) {
                    int n = random.nextInt(op.bytes().length);
                    long end = op.pos() + op.bytes().length;
                    boolean extends_ = end > inode.length;
                    inode.write(op.pos(), Arrays.copyOf(op.bytes(), n));
                    if (extends_ && random.nextInt(3) == 0) {
                        inode.write(op.pos() + n, new byte[op.bytes().length - n]); // zero-filled tail
                    }
                    tornWrites++;
                    bytesLost += op.bytes().length - n;
                } else {
                    inode.write(op.pos(), op.bytes());
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e); // cannot happen: the op was applied once already
            }
        }
        inode.makeDurable();
    }

    /** How many times {@link #powerCut} ran. */
    public synchronized long powerCuts() {
        return powerCuts;
    }

    /** Unsynced bytes dropped (not replayed, or past a tear) across all cuts. */
    public synchronized long bytesLost() {
        return bytesLost;
    }

    /** Unsynced writes that survived a cut only in part. */
    public synchronized long tornWrites() {
        return tornWrites;
    }

    /** Throws {@code IOException("simulated power cut")} if a cut came after {@code gen}; hold the monitor. */
    void checkGeneration(long gen) throws IOException {
        if (gen != generation) {
            throw new IOException("simulated power cut");
        }
    }

    /** The hook of {@link #beforeForce}. */
    Consumer<Path> forceHook() {
        return forceHook;
    }

    /** A {@code DELETE_ON_CLOSE} channel closed: its name goes, unless a cut or a rename came first. */
    synchronized void closed(Path path, Inode inode, long gen) {
        if (gen == generation && names.get(path) == inode) {
            names.remove(path);
        }
    }

    /** A process's handle: dead after the next cut. */
    private final class Session implements Disk {
        private final long gen;

        Session(long gen) {
            this.gen = gen;
        }

        @Override
        public FileChannel open(Path file, StandardOpenOption... options) throws IOException {
            return SimulatedDisk.this.open(file, gen, options);
        }

        @Override
        public void move(Path from, Path to) throws IOException {
            SimulatedDisk.this.move(from, to, gen);
        }

        @Override
        public boolean deleteIfExists(Path file) throws IOException {
            return SimulatedDisk.this.deleteIfExists(file, gen);
        }

        @Override
        public void syncDirectory(Path dir) throws IOException {
            SimulatedDisk.this.syncDirectory(dir, gen);
        }

        @Override
        public void createDirectories(Path dir) throws IOException {
            SimulatedDisk.this.createDirectories(dir, gen);
        }

        @Override
        public boolean exists(Path file) {
            synchronized (SimulatedDisk.this) {
                try {
                    checkGeneration(gen);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return SimulatedDisk.this.exists(file);
            }
        }

        @Override
        public long size(Path file) throws IOException {
            synchronized (SimulatedDisk.this) {
                checkGeneration(gen);
                return SimulatedDisk.this.size(file);
            }
        }

        @Override
        public List<String> list(Path dir) throws IOException {
            synchronized (SimulatedDisk.this) {
                checkGeneration(gen);
                return SimulatedDisk.this.list(dir);
            }
        }

        @Override
        public Disk session() {
            return this;
        }

        @Override
        public long usableSpace(Path dir) {
            return Long.MAX_VALUE;
        }

        @Override
        public long totalSpace(Path dir) {
            return Long.MAX_VALUE;
        }
    }
}
