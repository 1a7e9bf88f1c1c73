package mzspark.driver;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.scheduler.TaskInfo;
import org.apache.spark.executor.TaskMetrics;

/**
 * The hydration listener (compute.render.listener): forwards to a {@link HydrationSink} only
 * the result tasks and result stages of jobs carrying a tag that starts with the prefix. Every
 * other event (untagged jobs, blocks, SQL executions, metrics) is dropped here in the JVM,
 * without a py4j callback. Events arrive on Spark's listener bus thread, in the order posted.
 */
public final class HydrationListener extends SparkListener {
    private final HydrationSink sink;
    private final String prefix;
    /** result stage id -> (tag, partitions) of the tagged jobs running. */
    private final Map<Integer, Object[]> stages = new HashMap<>();
    /** tagged job id -> its result stage id. */
    private final Map<Integer, Integer> jobs = new HashMap<>();
    private volatile long forwarded;

    public HydrationListener(HydrationSink sink, String prefix) {
        this.sink = sink;
        this.prefix = prefix;
    }

    /** Events forwarded to the sink so far. */
    public long forwarded() {
        return forwarded;
    }

    private String mine(Properties props) {
        String tags = props == null ? null : props.getProperty("spark.job.tags");
        if (tags == null || tags.isEmpty()) {
            return null;
        }
        for (String t : tags.split(",")) {
            if (t.startsWith(prefix)) {
                return t;
            }
        }
        return null;
    }

    private static void failed(String where, RuntimeException e) {
        // a listener must never fail Spark's bus
        System.err.println("mzspark hydration listener: " + where + ": " + e);
    }

    @Override
    public void onJobStart(SparkListenerJobStart e) {
        try {
            String tag = mine(e.properties());
            if (tag == null) {
                return;
            }
            scala.collection.Seq<StageInfo> infos = e.stageInfos();
            if (infos.isEmpty()) {
                // a job over no partitions (an empty piece): done as it starts
                forwarded++;
                sink.stageCompleted(tag, 0);
                return;
            }
            StageInfo result = infos.apply(0);
            for (int i = 1; i < infos.size(); i++) {
                if (infos.apply(i).stageId() > result.stageId()) {
                    result = infos.apply(i);
                }
            }
            stages.put(result.stageId(), new Object[] {tag, result.numTasks()});
            jobs.put(e.jobId(), result.stageId());
        } catch (RuntimeException x) {
            failed("job start", x);
        }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd e) {
        if (stages.isEmpty()) {
            return;
        }
        try {
            Object[] st = stages.get(e.stageId());
            TaskInfo info = e.taskInfo();
            if (st == null || info == null || !info.successful()) {
                return;
            }
            int part = info.partitionId();
            if (part < 0) {
                part = info.index();
            }
            TaskMetrics m = e.taskMetrics();
            long runMs = m != null ? m.executorRunTime() : 0L;
            forwarded++;
            sink.taskSucceeded((String) st[0], part, (Integer) st[1], info.finishTime(), runMs);
        } catch (RuntimeException x) {
            failed("task end", x);
        }
    }

    @Override
    public void onStageCompleted(SparkListenerStageCompleted e) {
        if (stages.isEmpty()) {
            return;
        }
        try {
            StageInfo si = e.stageInfo();
            Object[] st = stages.get(si.stageId());
            if (st != null && si.failureReason().isEmpty()) {
                forwarded++;
                sink.stageCompleted((String) st[0], (Integer) st[1]);
            }
        } catch (RuntimeException x) {
            failed("stage completed", x);
        }
    }

    @Override
    public void onJobEnd(SparkListenerJobEnd e) {
        if (jobs.isEmpty()) {
            return;
        }
        Integer sid = jobs.remove(e.jobId());
        if (sid != null) {
            stages.remove(sid);
        }
    }
}
