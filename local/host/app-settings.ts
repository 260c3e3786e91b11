// Binding expressions such as "%EVENTS_QUEUE_NAME%" name an app setting, as in the Functions host; the
// local host resolves them from its settings (the process environment by default).

export type AppSettings = Readonly<Record<string, string | undefined>>;

export function resolveAppSettings(text: string, settings: AppSettings): string {
  return text.replace(/%([^%]+)%/g, (_match, name: string) => {
    const value = settings[name];
    if (value === undefined || value === '') {
      throw new Error(`Binding expression %${name}% names an app setting that is not set`);
    }
    return value;
  });
}
