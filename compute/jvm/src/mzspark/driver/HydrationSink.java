package mzspark.driver;

/**
 * Where {@link HydrationListener} reports the tasks and stages of tagged jobs: implemented in
 * Python (compute.hydration.Tracker, through py4j's callback server).
 */
public interface HydrationSink {
    /** A successful result task of a job tagged {@code tag}: partition {@code partition} of {@code partitions}. */
    void taskSucceeded(String tag, int partition, int partitions, long finishMs, long runMs);

    /** The result stage of a job tagged {@code tag} completed successfully ({@code partitions} tasks). */
    void stageCompleted(String tag, int partitions);
}
