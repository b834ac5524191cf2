package io.hayloft.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.serverkit.config.ConfigLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store's {@code directory}: one {@code host:port} (every existing configuration), or the replicas
 * of a directory group as {@code h1:p1,h2:p2,h3:p3} in YAML, as a YAML list, or as {@code key=value};
 * a bad entry is refused naming the key and the entry.
 */
class StoreConfigDirectoryTest {
    @TempDir
    Path dir;

    @Test
    void oneAddressOrAListInEveryForm() throws Exception {
        Path f = dir.resolve("store.yaml");
        Files.writeString(f, "directory: 10.0.0.1:7000\n");
        assertThat(ConfigLoader.load(f, List.of(), StoreConfig.class).validate().directories()).containsExactly("10.0.0.1:7000");
        Files.writeString(f, "directory: 10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000\n");
        assertThat(ConfigLoader.load(f, List.of(), StoreConfig.class).validate().directories())
                .containsExactly("10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000");
        Files.writeString(f, "directory:\n  - 10.0.0.1:7000\n  - 10.0.0.2:7000\n");
        assertThat(ConfigLoader.load(f, List.of(), StoreConfig.class).validate().directories())
                .containsExactly("10.0.0.1:7000", "10.0.0.2:7000");
        assertThat(ConfigLoader.load(null, List.of("directory=h1:1,h2:2,h3:3"), StoreConfig.class).validate().directories())
                .containsExactly("h1:1", "h2:2", "h3:3");
        StoreConfig none = ConfigLoader.load(null, List.of(), StoreConfig.class).validate();
        assertThat(none.directories()).isEmpty();
        assertThat(none.deleteSyncRequired()).isFalse();
    }

    @Test
    void aBadEntryIsNamedWithItsKey() throws Exception {
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("directory=h1:7000,h2"), StoreConfig.class).validate())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("directory: entry 'h2'");
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("directory=h1:70000"), StoreConfig.class).validate())
                .hasMessageContaining("directory: entry 'h1:70000'").hasMessageContaining("1..65535");
    }
}
