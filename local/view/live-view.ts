// The live terminal view: redraws the screen a few times a second on a terminal; on a pipe or a log file
// it prints the screen only when it changed, at most every two seconds, so the output stays readable.
import type { EmulatedVm } from '../arm-emulator/index.js';
import type { Recorder } from './recorder.js';
import { renderScreen } from './screen.js';

export interface LiveViewOptions {
  title: string;
  recorder: Recorder;
  vms: () => EmulatedVm[];
  notes: () => readonly string[];
  output?: NodeJS.WriteStream;
}

export interface LiveView {
  stop(): void;
}

const clearScreen = '\x1b[H\x1b[2J';

export function startLiveView(options: LiveViewOptions): LiveView {
  const output = options.output ?? process.stdout;
  const interactive = Boolean(output.isTTY);
  let last = '';
  const draw = (): void => {
    const { recorder } = options;
    const screen = renderScreen(
      {
        title: options.title,
        elapsedMs: Date.now() - recorder.startedAt,
        nodeClaims: [...recorder.nodeClaims.values()],
        nodes: [...recorder.nodes.values()],
        vms: options.vms(),
        nodePools: [...recorder.nodePools.values()],
        pods: [...recorder.pods.values()],
        notes: options.notes(),
        now: new Date(),
      },
      interactive ? Math.max(4, Math.floor(((output.rows || 50) - 24) / 3)) : 14,
    );
    // The elapsed time changes every frame; compare without it so a quiet cluster prints nothing new.
    const body = screen.slice(screen.indexOf('\n'));
    if (interactive) {
      output.write(clearScreen + screen + '\n');
    } else if (body !== last) {
      output.write(`\n${screen}\n`);
    }
    last = body;
  };
  const timer = setInterval(draw, interactive ? 250 : 2_000);
  draw();
  return {
    stop: () => {
      clearInterval(timer);
      draw();
    },
  };
}
