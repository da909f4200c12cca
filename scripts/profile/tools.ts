// The profilers `workshop profile` offers, and on which Node versions clinic's are known not to work for
// our servers (run as `node --import tsx`), as measured on this machine with clinic 13.0.0 on exercise 01
// under its load (warm-up 2 s, measured 5 s), Node 20.20.2, 22.23.5 and 24.22.3. bubbleprof is not
// offered: it hangs after the load, writes nothing and leaves its server running.

export type ClinicTool = 'flame' | 'doctor' | 'heap';
export type ProfileTool = ClinicTool | 'cpu';

export const TOOLS: readonly ProfileTool[] = ['flame', 'doctor', 'heap', 'cpu'];

/** clinic's command for each of its tools. */
export const CLINIC_COMMAND: Record<ClinicTool, string> = { flame: 'flame', doctor: 'doctor', heap: 'heapprofiler' };

/** What each tool shows, for the help text and the report. */
export const TOOL_SUMMARY: Record<ProfileTool, string> = {
  flame: 'clinic flame: a flame graph of where the CPU time goes',
  doctor: 'clinic doctor: CPU, memory, event-loop delay and handles over time, with a diagnosis',
  heap: 'clinic heapprofiler: which functions allocated the memory still held',
  cpu: "the runtime's own --cpu-prof, drawn as a flame graph (works on every Node version)",
};

/**
 * Node majors on which a clinic tool is known not to work for our servers, with the measured reason.
 * Both Node 20 failures have one cause: clinic injects its sampler with NODE_OPTIONS=-r, and on Node 20
 * that preload also runs in the thread that holds tsx's loader hooks (on 22 and 24 it does not).
 * - doctor on 20: the report is written, but the loader thread's samples (its own heap, no delay) are
 *   interleaved with the server's, and the diagnosis reads "unknown"; on 22 and 24 the same run is
 *   diagnosed as an event-loop problem, which it is.
 * - heapprofiler on 20: both threads write the same file and the loader thread's profile is the one
 *   left: no frame of the server or restify in it; on 22 and 24 the server's frames are there.
 * Upstream reports doctor broken on Node >= 21.7 when stopped with Ctrl-C; run with --on-port, as
 * here, it is stopped another way, and it worked on 22.23.5 and 24.22.3.
 */
export const KNOWN_BROKEN: Record<ClinicTool, { majors: number[]; reason: string }> = {
  flame: { majors: [], reason: '' },
  doctor: { majors: [20], reason: "its sampler also runs in tsx's loader thread and mixes that thread's samples into the server's" },
  heap: { majors: [20], reason: "it profiles tsx's loader thread instead of the server" },
};

/**
 * What a tool that works still gets wrong on some Node majors, measured the same way: one line printed with
 * its report. flame on 24: with 01 under load, the `after` listener held 74% of the samples, but under it
 * 68% sat in one unnamed block, "node [SHARED_LIB]", where on 20 and 22 sha512Hex and the hashing are
 * named (37-41%); --cpu-prof on 24 names them (sha512Hex 47%).
 */
export const KNOWN_LIMITS: Partial<Record<ProfileTool, { majors: number[]; note: string }>> = {
  flame: {
    majors: [24],
    note: 'on Node 24, clinic flame shows much of the work under your functions as one unnamed block, "node [SHARED_LIB]" (inlined functions and Node\'s own C++); --tool cpu names them',
  },
};

export function limitNote(tool: ProfileTool, major = nodeMajor()): string | undefined {
  const known = KNOWN_LIMITS[tool];
  return known?.majors.includes(major) ? known.note : undefined;
}

/** The Node majors the workshop supports (package.json's engines). */
const SUPPORTED_MAJORS = [20, 22, 24];

export function nodeMajor(version = process.versions.node): number {
  return Number(version.split('.')[0]);
}

/** Why this tool does not work on this Node major, or undefined when it does. */
export function brokenReason(tool: ProfileTool, major = nodeMajor()): string | undefined {
  if (tool === 'cpu') return undefined;
  const known = KNOWN_BROKEN[tool];
  return known.majors.includes(major) ? known.reason : undefined;
}

export interface ToolChoice {
  tool: ProfileTool;
  /** Set when the asked-for tool does not work here: one line saying so and what runs instead. */
  fallback?: string;
}

/**
 * The tool to run: the one asked for if it works here, else cpu. By default cpu: its positions are lines
 * of the .ts file the trainee edits (clinic's are positions in the code tsx produced), and the exercises'
 * advice is checked against it (test/diagnosis.test.ts).
 */
export function chooseTool(requested: ProfileTool | undefined, major = nodeMajor()): ToolChoice {
  const wanted = requested ?? 'cpu';
  const reason = brokenReason(wanted, major);
  if (!reason || wanted === 'cpu') return { tool: wanted };
  const name = `clinic ${CLINIC_COMMAND[wanted]}`;
  const elsewhere = SUPPORTED_MAJORS.filter((m) => !KNOWN_BROKEN[wanted].majors.includes(m));
  const works = elsewhere.length > 0 ? `; it works on Node ${elsewhere.join(' and ')}` : '';
  return { tool: 'cpu', fallback: `${name} does not work on Node ${major} here (${reason}${works}): profiling with --cpu-prof instead.` };
}
