// Preloaded into clinic's own process for `clinic flame`. 0x, which clinic flame runs, takes the first V8
// log of the server's pid in directory order. Under tsx the module loader runs on a thread of its own
// (Node 20+), which writes a log of its own, so about one run in four 0x read the loader's log: a flame
// graph of start-up and idle waiting, without a frame of the server's code. Measured on 2026-11-30: that
// log is under 1 MB of samples, the main thread's ~17 MB. So of several logs, take the largest.
const fs = require('node:fs');
const path = require('node:path');

const v8 = require(require.resolve('0x/platform/v8.js', { paths: [path.dirname(require.resolve('@clinic/flame'))] }));
const firstInDirectoryOrder = v8.getIsolateLog;

v8.getIsolateLog = function largestIsolateLog(workingDir, pid) {
  const pattern = new RegExp(`isolate-(0x)?([0-9A-Fa-f]{2,16})(-${pid})?-${pid}-v8.log`);
  const logs = fs.readdirSync(workingDir).filter((name) => pattern.test(name));
  if (logs.length < 2) return firstInDirectoryOrder.call(this, workingDir, pid);
  const size = (name) => fs.statSync(path.join(workingDir, name)).size;
  return logs.sort((a, b) => size(b) - size(a))[0];
};
