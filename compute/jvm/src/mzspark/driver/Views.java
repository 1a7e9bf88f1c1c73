package mzspark.driver;

import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.catalog.TemporaryViewRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.command.ViewHelper;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Global temporary views of already analyzed Datasets, registered and dropped in the session
 * catalog directly (compute.render.driver_calls).
 *
 * <p>{@code Dataset.createOrReplaceGlobalTempView} runs a {@code CreateViewCommand} as a
 * query (analysis, optimization and planning of the command: ~350 analyzer / optimizer rule
 * runs), and {@code Catalog.dropGlobalTempView} analyzes the view's plan again to uncache it.
 * For a new view name (nothing replaced) of an analyzed Dataset, the command stores exactly
 * {@code ViewHelper.createTemporaryViewRelation(...)} in the catalog; that is done here without
 * the query around it. The drop skips the uncaching: the callers' views are never cached
 * themselves (their callers unpersist what they persisted).
 */
public final class Views {
    private Views() {}

    /** Register {@code df}'s analyzed plan as the global temporary view {@code name}, a new name. */
    public static void register(SparkSession session, Dataset<?> df, String name) {
        registerPlan(session, df.queryExecution().analyzed(), name);
    }

    /** Register the analyzed plan {@code plan} as the global temporary view {@code name}, a new name. */
    public static void registerPlan(SparkSession session, LogicalPlan plan, String name) {
        SessionCatalog catalog = session.sessionState().catalog();
        TableIdentifier id = new TableIdentifier(name, Option.apply(catalog.globalTempDatabase()));
        TemporaryViewRelation view = ViewHelper.createTemporaryViewRelation(
            id, session, false, catalog::getRawGlobalTempView, Option.empty(), plan, plan,
            CollectionConverters.asScala(java.util.List.<String>of()).toList(), Option.empty());
        catalog.createGlobalTempView(name, view, false);
    }

    /** Drop the global temporary view {@code name} (no uncaching); whether it existed. */
    public static boolean drop(SparkSession session, String name) {
        return session.sessionState().catalog().dropGlobalTempView(name);
    }
}
