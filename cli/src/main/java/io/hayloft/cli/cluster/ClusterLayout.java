package io.hayloft.cli.cluster;

import io.hayloft.serverkit.config.Ports;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Properties;

/**
 * The ports and racks of an {@link EmbeddedCluster}, kept in {@code DATA/cluster.properties} so a
 * restarted cluster comes back on the same addresses (clients and the directory's store records
 * stay valid). A Java properties file, written to a temporary file, fsynced, then renamed:
 * <pre>
 * directory.port=7000        the directory's port
 * stores=3                   number of stores
 * store.&lt;i&gt;.port=40123     store i's port
 * store.&lt;i&gt;.rack=rack-0    store i's rack
 * directories=3              replicas of the directory group (absent: a single directory)
 * directory.&lt;i&gt;.port=7001   replica i's HTTP port (replica 0's is directory.port)
 * directory.&lt;i&gt;.raft=40321  replica i's Raft port
 * </pre>
 * The replicas' ports never change once recorded: the group keeps its members' addresses in its log.
 * A cluster started with more stores than recorded adds the new ones; with fewer, it keeps them all
 * (a store's data is never dropped silently).
 *
 * <p>Not thread-safe: {@link EmbeddedCluster} guards it.
 */
final class ClusterLayout {
    static final String FILE = "cluster.properties";

    private int directoryPort;
    private final int[] ports;
    private final String[] racks;
    /** HTTP and Raft ports of the replicas of a directory group; empty for a single directory. */
    private final int[] replicaHttp;
    private final int[] replicaRaft;

    private ClusterLayout(int directoryPort, int[] ports, String[] racks, int[] replicaHttp, int[] replicaRaft) {
        this.directoryPort = directoryPort;
        this.ports = ports;
        this.racks = racks;
        this.replicaHttp = replicaHttp;
        this.replicaRaft = replicaRaft;
    }

    static ClusterLayout load(Path dataDir, int stores, int rackCount, int directoryPort) throws IOException {
        return load(dataDir, stores, rackCount, directoryPort, 1);
    }

    /**
     * As {@link #load(Path, int, int, int)}, for {@code directories} directory replicas (more than one:
     * a group). A new group's replicas get HTTP ports {@code directoryPort}, +1, +2... (free ones when
     * it is 0) and free Raft ports; a recorded group keeps its ports, and must have as many replicas.
     */
    static ClusterLayout load(Path dataDir, int stores, int rackCount, int directoryPort, int directories) throws IOException {
        Path f = dataDir.resolve(FILE);
        Properties p = new Properties();
        if (Files.exists(f)) {
            try (InputStream in = Files.newInputStream(f)) {
                p.load(in);
            }
        }
        int recorded = intProp(p, "stores", 0, f);
        int n = Math.max(stores, recorded);
        int[] ports = new int[n];
        String[] racks = new String[n];
        for (int i = 0; i < n; i++) {
            ports[i] = intProp(p, "store." + i + ".port", 0, f);
            racks[i] = p.getProperty("store." + i + ".rack", "rack-" + (i % rackCount));
        }
        int dir = intProp(p, "directory.port", directoryPort, f);
        int recordedReplicas = intProp(p, "directories", 1, f);
        if (Files.exists(f) && recordedReplicas != directories && (recordedReplicas > 1 || directories > 1)) {
            throw new IllegalArgumentException(f + " records a cluster of " + recordedReplicas + " director"
                    + (recordedReplicas == 1 ? "y" : "ies") + ", not " + directories + ": start it with --directories "
                    + recordedReplicas + " (or use a new --dir)");
        }
        int[] http = new int[directories > 1 ? directories : 0];
        int[] raft = new int[http.length];
        for (int i = 0; i < http.length; i++) {
            int dflt = i == 0 ? dir : directoryPort == 0 ? 0 : directoryPort + i;
            http[i] = i == 0 ? dir : intProp(p, "directory." + i + ".port", dflt, f);
            raft[i] = intProp(p, "directory." + i + ".raft", 0, f);
        }
        for (int i = 0; i < http.length; i++) {
            if (http[i] == 0) {
                http[i] = Ports.free();
            }
            if (raft[i] == 0) {
                raft[i] = Ports.free();
            }
        }
        if (http.length > 0) {
            dir = http[0];
        }
        ClusterLayout l = new ClusterLayout(dir, ports, racks, http, raft);
        l.save(dataDir);
        return l;
    }

    private static int intProp(Properties p, String key, int dflt, Path f) {
        String v = p.getProperty(key);
        if (v == null) {
            return dflt;
        }
        try {
            int i = Integer.parseInt(v.trim());
            if (i < 0 || i > 65535) {
                throw new NumberFormatException();
            }
            return i;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(f + ": " + key + " must be a number in 0..65535, was '" + v + "'");
        }
    }

    void save(Path dataDir) throws IOException {
        Properties p = new Properties();
        p.setProperty("directory.port", Integer.toString(directoryPort));
        p.setProperty("stores", Integer.toString(ports.length));
        for (int i = 0; i < ports.length; i++) {
            p.setProperty("store." + i + ".port", Integer.toString(ports[i]));
            p.setProperty("store." + i + ".rack", racks[i]);
        }
        if (replicaHttp.length > 0) {
            p.setProperty("directories", Integer.toString(replicaHttp.length));
            for (int i = 0; i < replicaHttp.length; i++) {
                p.setProperty("directory." + i + ".raft", Integer.toString(replicaRaft[i]));
                if (i > 0) {
                    p.setProperty("directory." + i + ".port", Integer.toString(replicaHttp[i]));
                }
            }
        }
        Path tmp = dataDir.resolve(FILE + ".tmp");
        try (OutputStream out = Files.newOutputStream(tmp)) {
            p.store(out, "Hayloft embedded cluster layout");
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, dataDir.resolve(FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        try (FileChannel d = FileChannel.open(dataDir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    int stores() {
        return ports.length;
    }

    /** Replicas of the directory group (0: a single directory). */
    int replicas() {
        return replicaHttp.length;
    }

    int replicaHttpPort(int i) {
        return replicaHttp[i];
    }

    int replicaRaftPort(int i) {
        return replicaRaft[i];
    }

    int directoryPort() {
        return directoryPort;
    }

    void setDirectoryPort(int p) {
        directoryPort = p;
    }

    int storePort(int i) {
        return ports[i];
    }

    void setStorePort(int i, int p) {
        ports[i] = p;
    }

    String rack(int i) {
        return racks[i];
    }
}
