package io.hayloft.cli.client;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PhotoStat;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.PhotoId;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft stat [ID]}: with an id, where the photo lives (volume, state, replicas, read order) and
 * its alternates with their sizes as a replica reports them (from the volume map and the stores);
 * without, a summary of the cluster (stores and volumes by state, bytes stored).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
        description = "Show where a photo lives, or (without ID) a summary of the cluster.")
public final class StatCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "Photo id.")
    String id;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            if (id != null) {
                PhotoId photo = PhotoId.parse(id);
                PhotoStat st = c.stat(photo); // a wrong cookie is a PhotoNotFoundException, like a missing photo
                out.println("id        " + photo);
                out.println("volume    " + st.volume() + " (" + st.volumeState() + ")");
                out.println("alts      " + (st.alts().isEmpty() && !st.volumeState().hot() ? "(erasure-coded: not listed)"
                        : st.alts().stream().map(x -> Integer.toUnsignedString(x.alt()) + " (" + x.size() + " bytes)")
                                .collect(Collectors.joining(", "))));
                out.println("replicas  " + String.join(" ", st.replicas()));
                out.println("readFrom  " + String.join(" ", st.places()));
            } else {
                List<StoreInfo> stores = Futures.await(c.directory().stores());
                List<VolumeInfo> volumes = Futures.await(c.directory().volumes());
                Map<String, Integer> storeStates = new TreeMap<>(); // by name, as printed
                Map<String, Integer> volumeStates = new TreeMap<>();
                long bytes = 0;
                for (StoreInfo s : stores) {
                    storeStates.merge(s.state() == null ? "?" : s.state().name(), 1, Integer::sum);
                }
                for (VolumeInfo v : volumes) {
                    volumeStates.merge(v.state() == null ? "?" : v.state().name(), 1, Integer::sum);
                    bytes += v.sizeBytes();
                }
                out.println("directory " + String.join(",", c.directory().addresses()));
                out.println("stores    " + stores.size() + " " + storeStates);
                out.println("volumes   " + volumes.size() + " " + volumeStates);
                out.println("bytes     " + bytes + " (per replica)");
            }
        }
        out.flush();
        return 0;
    }
}
