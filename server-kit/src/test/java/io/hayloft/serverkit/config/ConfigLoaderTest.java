package io.hayloft.serverkit.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
    public static final class Cfg {
        public List<String> dirs = List.of("data");
        public int port = 1;
        public Nested nested = new Nested();
    }

    public static final class Nested {
        public long limit = 5;
    }

    @TempDir
    Path dir;

    @Test
    void yamlThenOverridesThenDefaults() throws Exception {
        Path f = dir.resolve("c.yaml");
        Files.writeString(f, "port: 80\nnested:\n  limit: 7\n");
        Cfg c = ConfigLoader.load(f, List.of("port=81", "dirs=/a,/b"), Cfg.class);
        assertThat(c.port).isEqualTo(81);
        assertThat(c.nested.limit).isEqualTo(7);
        assertThat(c.dirs).containsExactly("/a", "/b");
        assertThat(ConfigLoader.load(null, List.of("dirs=/x", "nested.limit=9"), Cfg.class).dirs).containsExactly("/x");
    }

    @Test
    void errorsNameTheKeyOrValue() throws Exception {
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("prot=1"), Cfg.class)).hasMessageContaining("'prot'");
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("port=abc"), Cfg.class)).hasMessageContaining("abc");
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("port"), Cfg.class)).hasMessageContaining("key=value");
        assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("missing.yaml"), List.of(), Cfg.class))
                .hasMessageContaining("not found");
    }
}
