package io.hayloft.serverkit.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a top-level {@code String} field of a configuration class that holds a comma-separated list
 * (the directory replicas' {@code h1:p1,h2:p2,h3:p3}): {@link ConfigLoader} then also takes a YAML
 * list for it, and a {@code key=a,b,c} override, joining the items with commas.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface CommaList {
}
