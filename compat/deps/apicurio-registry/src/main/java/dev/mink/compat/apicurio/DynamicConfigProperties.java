package dev.mink.compat.apicurio;

import java.util.List;

import javax.enterprise.inject.Produces;
import javax.inject.Singleton;

import io.apicurio.common.apps.config.DynamicConfigPropertyList;

/**
 * Stands in for the build step of the Quarkus extension
 * io.apicurio:apicurio-common-app-components-config-index, whose
 * -deployment artifact Maven Central does not serve (pom.xml excludes the
 * extension). That step lists the registry's dynamic (runtime-editable)
 * configuration properties; this list is empty, so every property keeps the
 * value of application.properties, which is all the tests need.
 */
public class DynamicConfigProperties {
    @Produces
    @Singleton
    DynamicConfigPropertyList dynamicConfigPropertyList() {
        return new DynamicConfigPropertyList(List.of());
    }
}
