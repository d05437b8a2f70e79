/** A page loaded with its own chunk (the Reports page and its plotting library). */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorAlert, Loading } from './ui.js';

export function lazy<P extends object>(load: () => Promise<ComponentType<P>>) {
  let loaded: ComponentType<P> | undefined;
  return function Lazy(props: P) {
    const [component, setComponent] = useState<ComponentType<P> | undefined>(() => loaded);
    const [error, setError] = useState<unknown>(null);
    useEffect(() => {
      if (!loaded)
        load()
          .then((c) => setComponent(() => (loaded = c)))
          .catch(setError);
    }, []);
    if (error)
      return (
        <>
          <h1>Could not load this page</h1>
          <ErrorAlert error={error} />
        </>
      );
    const C = component;
    return C ? <C {...props} /> : <Loading what="the page" />;
  };
}
