package io.hayloft.cli.cluster;

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
 * </pre>
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

    private ClusterLayout(int directoryPort, int[] ports, String[] racks) {
        this.directoryPort = directoryPort;
        this.ports = ports;
        this.racks = racks;
    }

    static ClusterLayout load(Path dataDir, int stores, int rackCount, int directoryPort) throws IOException {
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
        ClusterLayout l = new ClusterLayout(dir, ports, racks);
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
