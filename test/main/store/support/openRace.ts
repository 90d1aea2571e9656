// Child process for the open-race test: opens (creating) the databases named on the command line, as fast as it can.
import { openDatabase } from '../../../../main/store/database.js';

for (const file of process.argv.slice(2)) {
  openDatabase(file, {
    migrations: [
      { version: 1, name: 't', up: (db) => void db.exec('CREATE TABLE IF NOT EXISTS t (x INTEGER)') },
    ],
  }).close();
}
process.stdout.write('opened\n');
