package io.hayloft.cli.client;

import io.hayloft.client.HayloftClient;
import io.hayloft.format.wire.PhotoId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft rm ID...}: deletes photos (every alternate key, on every replica).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "rm", mixinStandardHelpOptions = true, description = "Delete photos by id.")
public final class RmCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "Photo ids as printed by 'hayloft put'.")
    List<String> ids;

    @Override
    public Integer call() {
        List<PhotoId> photos = new ArrayList<>();
        for (String s : ids) {
            photos.add(PhotoId.parse(s));
        }
        try (HayloftClient c = client.client()) {
            for (PhotoId p : photos) {
                c.delete(p);
                spec.commandLine().getOut().println("deleted " + p);
            }
        }
        spec.commandLine().getOut().flush();
        return 0;
    }
}
